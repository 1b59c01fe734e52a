"""The llama.cpp backend on the real SmolLM2 GGUF: our token loop, the KV cache it keeps, the mask.

Checked against llama.cpp itself (its own greedy completion of the same prompt) and against the
grammar (every token the constrained loop emits is replayed through a fresh ``Machine``).
"""

from __future__ import annotations

import functools
import os
import time
from typing import Any

import numpy as np
import pytest

from tooldec.decoding import Compiler, Grammar, Machine
from tooldec.dialects import Hermes
from tooldec.errors import ToolDecError
from tooldec.models import smollm2_gguf_path
from tooldec.runtime import ToolDecoder, tool_instructions
from tooldec.tools import ToolSet

llama_cpp = pytest.importorskip("llama_cpp", reason="the llama extra is not installed")

from tooldec.backends import generator_for, load  # noqa: E402
from tooldec.backends.llamacpp import PROMPT_CHUNK, LlamaCppGenerator  # noqa: E402


def multiply(a: int, b: int) -> int:
    """Multiply two integers."""
    return a * b


def weather(city: str, unit: str = "celsius") -> str:
    """Today's weather in a city."""
    return f"sunny in {city}"


TOOLS = ToolSet([multiply, weather])


@functools.cache
def loaded() -> tuple[Any, Any, Any]:
    model, tokenizer, vocab, backend = load(smollm2_gguf_path(), "llamacpp", threads=1)
    assert backend == "llamacpp"
    return model, tokenizer, vocab


@pytest.fixture(scope="module")
def generator() -> LlamaCppGenerator:
    model, tokenizer, vocab = loaded()
    made = generator_for(model, tokenizer, vocab)
    assert isinstance(made, LlamaCppGenerator)
    return made


def prompt_ids(tokenizer: Any, question: str) -> list[int]:
    text = tokenizer.apply_chat_template(
        [{"role": "system", "content": tool_instructions(TOOLS, Hermes())}, {"role": "user", "content": question}],
        add_generation_prompt=True, tokenize=False)
    return list(tokenizer.encode(text, add_special_tokens=False))


def test_unconstrained_greedy_matches_llama_cpp_own_sampler(generator: LlamaCppGenerator) -> None:
    ids = prompt_ids(generator.tokenizer, "What is the capital of France?")
    ours = generator.generate(ids, max_new_tokens=12).ids
    llm = generator.model
    llm.reset()
    theirs = []
    for token in llm.generate(ids, temp=0.0, top_k=1, reset=True):
        theirs.append(int(token))
        if len(theirs) == len(ours) or token in generator.eos_ids:
            break
    assert ours == theirs


def test_kv_cache_reuse_gives_the_same_tokens_as_a_fresh_context(generator: LlamaCppGenerator) -> None:
    first = prompt_ids(generator.tokenizer, "What is 12 times 34?")
    second = prompt_ids(generator.tokenizer, "What is the weather in Oslo?")
    generator.generate(first, max_new_tokens=8)
    evaluated = generator.prompt_tokens_evaluated
    reused = generator.generate(second, max_new_tokens=8).ids
    shared = next(i for i, (a, b) in enumerate(zip(first, second)) if a != b)
    kept = shared - shared % PROMPT_CHUNK  # in whole chunks
    assert kept > 0
    assert generator.prompt_tokens_evaluated - evaluated == len(second) - kept  # only the new tail
    generator.model.reset()
    assert generator.generate(second, max_new_tokens=8).ids == reused


def test_a_cached_prompt_gives_the_logits_of_a_fresh_context(generator: LlamaCppGenerator) -> None:
    """llama.cpp's logits for a token depend on the batch it is evaluated in (this prompt's last
    token evaluated alone moves them by about 0.48): the cache is kept in whole chunks, so that the
    same prompt gives the same logits, to the bit, whatever the cache held."""
    ids = prompt_ids(generator.tokenizer, "Multiply 7 by 8 please.")
    generator.model.reset()
    fresh = generator.start(ids).copy()
    again = generator.start(ids).copy()  # everything cached but the last token
    generator.start(prompt_ids(generator.tokenizer, "Say hi."))
    after = generator.start(ids).copy()  # the system prompt cached
    assert generator.model.n_tokens == len(ids)
    assert np.array_equal(fresh, again)
    assert np.array_equal(fresh, after)


def test_next_logits_is_the_logits_row_of_a_fresh_evaluation(generator: LlamaCppGenerator) -> None:
    ids = prompt_ids(generator.tokenizer, "Say hi.")
    generator.generate(ids + [42], max_new_tokens=2)  # leave something else in the cache
    logits = generator.next_logits(ids)
    generator.model.reset()
    fresh = generator.next_logits(ids)
    assert logits.shape == (generator.model.n_vocab(),)
    np.testing.assert_allclose(logits, fresh, rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("temperature", [0.0, 1.0])
def test_constrained_output_is_a_valid_call_and_every_token_was_allowed(
        generator: LlamaCppGenerator, temperature: float) -> None:
    grammar = Grammar(TOOLS, generator.vocab, Hermes())
    generator.seed(3)
    for question in ("What is 1234 times 5678?", "Is it raining in Paris?"):
        generation = generator.generate(prompt_ids(generator.tokenizer, question), max_new_tokens=64,
                                        temperature=temperature, grammar=grammar, tool_choice="required")
        replay = Machine(grammar, tool_choice="required")
        assert all(replay.advance(token) for token in generation.ids)
        text = generator.vocab.decode([t for t in generation.ids if t not in generator.eos_ids]).decode()
        calls = Hermes().parse_calls(text)
        assert calls, text
        assert all(TOOLS[c.name].validate_arguments(c.arguments) == [] for c in calls), text
        assert generation.masked_steps == len(generation.ids)  # every token a masked pick, confirmed drafts too
        assert generation.overlapped_seconds == 0 or generator.mask_worker  # masks on the worker thread only with it


def test_masks_after_the_evaluation_give_the_worker_s_tokens(generator: LlamaCppGenerator) -> None:
    model, tokenizer, vocab = loaded()
    ids = prompt_ids(tokenizer, "What is 1234 times 5678?")
    answers = {}
    for on_worker in (True, False):
        made = LlamaCppGenerator(model, tokenizer, vocab, mask_worker=on_worker)
        grammar = Compiler(vocab, Hermes()).compile(TOOLS)  # a new compiler: no mask is cached
        generation = made.generate(ids, max_new_tokens=40, grammar=grammar, tool_choice="required")
        assert (generation.overlapped_seconds > 0) == on_worker
        answers[on_worker] = generation.ids
    assert answers[True] == answers[False]
    assert generator.mask_worker == (len(os.sched_getaffinity(0)) > model.n_threads)  # the default: a core beside llama.cpp's


@pytest.mark.parametrize("temperature", [0.0, 1.0])
def test_trying_the_model_s_pick_first_gives_the_masked_tokens(temperature: float) -> None:
    """Greedy, a loop that takes the model's own pick when the grammar allows it (and makes the
    mask only when it does not) writes the same tokens as one that masks every step, with a
    roomy budget and with one just large enough to bite, in required and auto mode. Sampled,
    every token it writes is one the grammar allows."""
    model, tokenizer, vocab = loaded()
    fewest = Machine(Grammar(TOOLS, vocab, Hermes()), tool_choice="required", parallel_tool_calls=False).min_tokens()
    cases = [("What is 1234 times 5678?", "required", 64), ("Weather in a city with a very long name?", "required", fewest + 1),
             ("Is it raining in Paris? Answer briefly.", "auto", 48)]
    checked = 0
    for question, choice, budget in cases:
        answers = {}
        for check_first in (True, False):
            made = LlamaCppGenerator(model, tokenizer, vocab, mask_worker=False, check_first=check_first)
            made.seed(5)
            grammar = Compiler(vocab, Hermes()).compile(TOOLS)  # a new compiler: no mask is cached
            generation = made.generate(prompt_ids(tokenizer, question), max_new_tokens=budget, temperature=temperature,
                                       grammar=grammar, tool_choice=choice, parallel_tool_calls=False)
            replay = Machine(grammar, tool_choice=choice, parallel_tool_calls=False)
            for i, token in enumerate(generation.ids):  # each token allowed by the budgeted mask of its step
                assert token in replay.allowed_token_ids(budget - i).tolist() and replay.advance(token), (question, i)
            assert generation.masked_steps == len(generation.ids)  # every token a masked pick, confirmed drafts too
            assert check_first or generation.checked_steps == 0
            checked += generation.checked_steps
            answers[check_first] = generation.ids
        if temperature == 0:
            assert answers[True] == answers[False], (question, budget)
    assert checked > 0  # the model's own picks were taken


def test_a_budget_just_large_enough_still_closes_the_call(generator: LlamaCppGenerator) -> None:
    grammar = Grammar(TOOLS, generator.vocab, Hermes())
    start = Machine(grammar, tool_choice="required", parallel_tool_calls=False)
    fewest = start.min_tokens()  # the shortest call, in this vocabulary's tokens
    for budget in (fewest, fewest + 2):
        generation = generator.generate(prompt_ids(generator.tokenizer, "Weather in a city with a very long name?"),
                                        max_new_tokens=budget, grammar=grammar, tool_choice="required",
                                        parallel_tool_calls=False, stop_after_call=Hermes())
        text = generator.vocab.decode(generation.ids).decode()
        assert len(generation.ids) <= budget
        assert generation.call_closed and Hermes().parse_calls(text), (budget, text)


def test_the_runtime_runs_tools_on_llama_cpp() -> None:
    model, tokenizer, vocab = loaded()
    decoder = ToolDecoder(model, tokenizer, TOOLS, vocab=vocab, tool_choice="required", max_new_tokens=96)
    result = decoder.run([{"role": "user", "content": "What is 1234 multiplied by 5678? Use a tool."}])
    assert result.calls and result.trace.invalid_calls == 0
    assert all(record.ok for record in result.calls), result.calls
    assert result.trace.masked_steps > 0


def test_the_budget_shrinks_to_the_context_window_and_the_call_still_closes(generator: LlamaCppGenerator) -> None:
    from llama_cpp import Llama

    grammar = Grammar(TOOLS, generator.vocab, Hermes())
    fewest = Machine(grammar, tool_choice="required", parallel_tool_calls=False).min_tokens()
    ids = prompt_ids(generator.tokenizer, "What is 1234 times 5678?")
    small = Llama(model_path=str(smollm2_gguf_path()), n_ctx=len(ids) + fewest + 2, n_threads=1, verbose=False)
    tight = LlamaCppGenerator(small, generator.tokenizer, generator.vocab)
    generation = tight.generate(ids, max_new_tokens=500, grammar=grammar, tool_choice="required",
                                parallel_tool_calls=False, stop_after_call=Hermes())
    assert len(ids) + len(generation.ids) <= small.n_ctx()
    assert generation.call_closed
    with pytest.raises(ToolDecError, match="context holds"):
        tight.generate(ids * 2, max_new_tokens=5)


def test_a_loaded_model_is_out_of_the_collector_s_generations() -> None:
    """``load`` freezes what it loaded (``settle``): the model's and tokenizer's objects are not
    traversed by a full collection in the middle of a generation, and what is made after them is."""
    import gc

    model, tokenizer, _ = loaded()
    assert gc.get_freeze_count() > 10_000
    assert not gc.is_tracked(tokenizer) or all(tokenizer is not obj for obj in gc.get_objects())
    made: list[object] = []
    assert any(obj is made for obj in gc.get_objects())


def test_a_server_job_whose_call_cannot_fit_ends_with_the_need(generator: LlamaCppGenerator) -> None:
    """A job handed to the serving worker with a budget below the required call's need ends
    with an error naming the need, before any token is generated."""
    from tooldec.serving.engine import Constraints, tools_key
    from tooldec.serving.worker import Done, Job, Worker

    spec = {"type": "function", "function": {"name": "weather", "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}
    events: list[Any] = []
    job = Job(prompt_ids=prompt_ids(generator.tokenizer, "Weather in Paris?"), specs=[spec], key=tools_key([spec]),
              tool_choice="required", parallel_tool_calls=False, max_tokens=3, temperature=0.0, seed=0,
              emit=events.append)
    worker = Worker(generator, Constraints(generator.vocab, Hermes()))
    worker.start()
    worker.submit(job)
    for _ in range(600):  # stop() cancels what is still queued: wait until the job has ended
        if events:
            break
        time.sleep(0.05)
    worker.stop()
    (done,) = events
    assert isinstance(done, Done) and done.finish_reason == "error" and done.completion_tokens == 0
    assert done.error is not None and "tokens but the budget is 3" in done.error
