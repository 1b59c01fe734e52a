"""tooldec's logits processor in vLLM's offline ``LLM`` on SmolLM2 (CPU), and its contract with
vLLM's batch updates (run in .venv-vllm: ``make test-vllm``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import torch
from vllm import LLM, SamplingParams
from vllm.engine.arg_utils import EngineArgs
from vllm.exceptions import VLLMValidationError
from vllm.v1.sample.logits_processor import BatchUpdate, MoveDirectionality

from tooldec.decoding import Grammar, Machine
from tooldec.dialects import Hermes, ToolCall
from tooldec.serving.vllm import chat_template_path, extra_args
from tooldec.serving.vllm.processor import ToolDecLogitsProcessor

from .helpers import ADD, TOOLS, WEATHER, calls_in_text, distinct_tools, vllm_model

pytestmark = pytest.mark.vllm
WEATHER_Q = [{"role": "user", "content": "What is the weather like in Paris today?"}]
KV_CACHE = 1 << 30  # bytes of KV cache (vLLM on CPU would otherwise reserve 92% of the memory)


@pytest.fixture(scope="module")
def llm() -> Iterator[LLM]:
    engine = LLM(str(vllm_model()), max_model_len=4096, max_num_seqs=16, enforce_eager=True, seed=0,
                 kv_cache_memory_bytes=KV_CACHE)
    yield engine
    del engine


def chat(llm: LLM, messages: list[dict[str, Any]], tools: list[dict[str, Any]], choice: Any,
         parallel: bool = True, max_tokens: int = 64) -> str:
    params = SamplingParams(temperature=0, max_tokens=max_tokens,
                            extra_args=extra_args(tools, choice, parallel_tool_calls=parallel))
    out = llm.chat(messages, params, tools=tools, chat_template=chat_template_path().read_text(), use_tqdm=False)
    return out[0].outputs[0].text


def test_required_named_auto(llm: LLM) -> None:
    assert calls_in_text(chat(llm, WEATHER_Q, TOOLS, "required"), TOOLS)
    named = calls_in_text(chat(llm, WEATHER_Q, TOOLS, "add"), TOOLS)
    assert named and named[0][0] == "add"
    calls_in_text(chat(llm, WEATHER_Q, TOOLS, "auto"), TOOLS)


def test_parallel_calls_on_and_off(llm: LLM) -> None:
    question = [{"role": "user", "content": "What is the weather in Paris, in London and in Rome?"}]
    assert len(calls_in_text(chat(llm, question, TOOLS, "required", True, 160), TOOLS)) >= 1
    assert len(calls_in_text(chat(llm, question, TOOLS, "required", False, 160), TOOLS)) == 1


def test_sixteen_requests_with_their_own_tools_in_one_batch(llm: LLM) -> None:
    tool_lists = [distinct_tools(i) for i in range(16)]
    conversations = [[{"role": "user", "content": f"What is {i} plus {2 * i}?"}] for i in range(16)]
    params = [SamplingParams(temperature=0, max_tokens=48, extra_args=extra_args(tools, "required"))
              for tools in tool_lists]
    template = chat_template_path().read_text()
    prompts = [llm.get_tokenizer().apply_chat_template(c, tools=t, chat_template=template, add_generation_prompt=True,
                                                       tokenize=False) for c, t in zip(conversations, tool_lists)]
    outputs = llm.generate(prompts, params, use_tqdm=False)
    for tools, output in zip(tool_lists, outputs):
        assert calls_in_text(output.outputs[0].text, tools)  # names only from its own list


def test_a_budget_too_small_for_a_call_is_not_cut(llm: LLM) -> None:
    text = chat(llm, [{"role": "user", "content": "Weather in Llanfairpwllgwyngyllgogerychwyrndrobwllllantysiliogogogoch?"}],
                [WEATHER], "required", max_tokens=30)
    assert len(calls_in_text(text, [WEATHER])) == 1


def test_a_bad_tool_schema_is_refused_before_generation(llm: LLM) -> None:
    bad = {"type": "function", "function": {"name": "bad", "parameters": {"type": "object", "properties": {
        "x": {"type": "strnig"}}}}}
    with pytest.raises(VLLMValidationError, match="'bad'"):
        chat(llm, WEATHER_Q, [bad], "required")


def engine_config() -> Any:
    return EngineArgs(model=str(vllm_model()), max_model_len=4096, enforce_eager=True,
                      kv_cache_memory_bytes=KV_CACHE).create_engine_config()


def test_requests_without_tooldec_args_are_untouched() -> None:
    """The processor's own contract with vLLM's batch updates: rows without ``extra_args["tooldec"]``
    keep their logits bit for bit; a tooldec row is masked; moves and removals follow the rows."""
    processor = ToolDecLogitsProcessor(engine_config(), torch.device("cpu"), False)
    width = processor.width
    plain = SamplingParams(max_tokens=16)
    constrained = SamplingParams(max_tokens=64, extra_args=extra_args([ADD], "required"))
    logits = torch.randn(2, width)
    processor.update_state(BatchUpdate(batch_size=1, removed=[], moved=[], added=[(0, plain, None, [])]))
    before = logits.clone()
    assert processor.apply(logits) is logits and torch.equal(logits, before)
    processor.update_state(BatchUpdate(batch_size=2, removed=[], moved=[], added=[(1, constrained, None, [])]))
    out = processor.apply(logits.clone())
    assert torch.equal(out[0], before[0])
    allowed = torch.isfinite(out[1]).nonzero().flatten().tolist()
    assert 0 < len(allowed) < width
    expected = Machine(Grammar([ADD], processor.vocab, Hermes()), tool_choice="required").allowed_token_ids()
    assert allowed == expected.tolist()  # the openers of a required call, as the cursor has them
    processor.update_state(BatchUpdate(batch_size=2, removed=[], added=[],
                                       moved=[(0, 1, MoveDirectionality.SWAP)]))
    out = processor.apply(before.clone())
    assert torch.equal(out[1], before[1]) and not torch.equal(out[0], before[0])
    processor.update_state(BatchUpdate(batch_size=1, removed=[0], added=[], moved=[]))
    assert torch.equal(processor.apply(before.clone()), before)


def test_a_row_in_free_text_is_not_touched() -> None:
    """auto: while the model writes text every token is allowed, so the row's logits stay as they are."""
    processor = ToolDecLogitsProcessor(engine_config(), torch.device("cpu"), False)
    auto = SamplingParams(max_tokens=64, extra_args=extra_args([ADD], "auto"))
    processor.update_state(BatchUpdate(batch_size=1, removed=[], moved=[], added=[(0, auto, None, [])]))
    logits = torch.randn(1, processor.width)
    assert torch.equal(processor.apply(logits.clone()), logits)


def test_named_twice_in_one_engine_masks_once() -> None:
    config = engine_config()
    first = ToolDecLogitsProcessor(config, torch.device("cpu"), False)
    second = ToolDecLogitsProcessor(config, torch.device("cpu"), False)
    assert not first.idle and second.idle


def test_after_its_last_call_a_request_ends_at_its_own_stop() -> None:
    """After the last call the request may make, only its own stop tokens: the client runs the call
    (the model wrote prose after it until ``max_tokens``). SmolLM2's tokenizer also calls
    ``<|endoftext|>`` an end, but vLLM stops at ``<|im_end|>`` (its generation config), so a row
    allowed ``<|endoftext|>`` wrote it until ``max_tokens``. A row whose cursor took an end is
    given the stop tokens too (an empty row would make vLLM pick token 0)."""
    processor = ToolDecLogitsProcessor(engine_config(), torch.device("cpu"), False)
    vocab = processor.vocab
    im_end, endoftext = vocab.special_id("<|im_end|>"), vocab.special_id("<|endoftext|>")
    assert im_end is not None and endoftext is not None and {im_end, endoftext} <= set(processor.eos.tolist())
    params = SamplingParams(max_tokens=64, extra_args=extra_args([ADD], "required", parallel_tool_calls=False))
    params.update_from_generation_config({}, eos_token_id=im_end)
    output: list[int] = []
    processor.update_state(BatchUpdate(batch_size=1, removed=[], moved=[], added=[(0, params, None, output)]))
    call = Hermes().format_call(ToolCall("add", {"a": 1, "b": 2}))
    for token in vocab.longest_match(call.encode()):
        allowed = torch.isfinite(processor.apply(torch.zeros(1, processor.width))[0])
        assert allowed[token], vocab.token_bytes[token]
        output.append(token)
        processor.update_state(None)
    allowed = torch.isfinite(processor.apply(torch.zeros(1, processor.width))[0]).nonzero().flatten().tolist()
    assert allowed == [im_end]  # no second call may follow: the message ends, at the request's own stop
    output.append(endoftext)  # as if sampled anyway: the cursor takes it as the end, vLLM does not
    processor.update_state(None)
    allowed = torch.isfinite(processor.apply(torch.zeros(1, processor.width))[0]).nonzero().flatten().tolist()
    assert allowed == [im_end]


def test_a_budget_no_call_fits_in_leaves_the_call_unbudgeted() -> None:
    """``max_tokens`` below the shortest call: no token would fit, and an all ``-inf`` row makes vLLM
    sample token 0. The call goes on without the budget (cut at ``max_tokens``), as it would start."""
    processor = ToolDecLogitsProcessor(engine_config(), torch.device("cpu"), False)
    params = SamplingParams(max_tokens=3, extra_args=extra_args([ADD], "required"))
    processor.update_state(BatchUpdate(batch_size=1, removed=[], moved=[], added=[(0, params, None, [])]))
    allowed = torch.isfinite(processor.apply(torch.zeros(1, processor.width))[0]).nonzero().flatten().tolist()
    expected = Machine(Grammar([ADD], processor.vocab, Hermes()), tool_choice="required").allowed_token_ids()
    assert allowed == expected.tolist()
