"""Jump-forward on the real SmolLM2 GGUF (llama.cpp) and its tokenizer: the tokens the grammar
forces are the tokenizer's own, evaluated in one batch as a draft the model confirms; greedy
tokens equal the loop's without it (also where the model cuts the forced text otherwise), calls
stay valid, budgets hold, and the switch turns it off."""

from __future__ import annotations

import pytest

from tooldec.backends.jump import encoder_of, forced_tokens
from tooldec.decoding import Grammar, Machine
from tooldec.dialects import Hermes

pytest.importorskip("llama_cpp", reason="the llama extra is not installed")

from tooldec.backends.llamacpp import LlamaCppGenerator

from .test_llamacpp import TOOLS, loaded, prompt_ids  # one model for both files

QUESTIONS = ["What is 3 times 4?", "Multiply 12 and 7."]


def answer(jump: bool, question: str, budget: int, choice: str = "required") -> tuple[list[int], int, int]:
    """Greedy ids, tokens forced and batches, from an empty cache (the same state either way)."""
    model, tokenizer, vocab = loaded()
    generator = LlamaCppGenerator(model, tokenizer, vocab, mask_worker=False, jump_forward=jump)
    model.reset()
    out = generator.generate(prompt_ids(tokenizer, question), max_new_tokens=budget,
                             grammar=Grammar(TOOLS, vocab, Hermes()), tool_choice=choice, stop_after_call=Hermes())
    return out.ids, out.forced_steps, out.jumps


def test_forced_tokens_are_the_tokenizer_s_own() -> None:
    _, tokenizer, vocab = loaded()
    machine = Machine(Grammar(TOOLS, vocab, Hermes()), tool_choice="required")
    assert machine.advanced.forced_bytes() == b'<tool_call>\n{"name": "'
    ids = forced_tokens(machine, encoder_of(tokenizer), 64)
    assert ids == tokenizer.encode('<tool_call>\n{"name":', add_special_tokens=False)  # ' "' could run on: left to the model
    assert machine.advanced.text == b""  # the cursor is where it was
    assert machine.accept_string(b'<tool_call>\n{"name": "w')
    assert vocab.decode(forced_tokens(machine, encoder_of(tokenizer), 64)).startswith(b'eather", "arguments"')


@pytest.mark.parametrize("question", QUESTIONS)
def test_greedy_tokens_equal_the_loop_without_jumps(question: str) -> None:
    _, _, vocab = loaded()
    on, forced, jumps = answer(True, question, 64)
    off, none, _ = answer(False, question, 64)
    assert forced > jumps > 0 and none == 0  # several tokens a batch
    assert on == off
    grammar = Grammar(TOOLS, vocab, Hermes())
    replay = Machine(grammar, tool_choice="required")
    assert all(replay.advance(token) for token in on) and replay.advanced.calls_completed == 1
    calls = Hermes().parse_calls(vocab.decode(on).decode())
    assert calls and all(TOOLS[c.name].validate_arguments(c.arguments) == [] for c in calls)


def test_a_draft_the_model_cuts_otherwise_gives_way_to_its_tokens() -> None:
    """SmolLM2 writes ``{"city"`` after ``"arguments": `` as `` {`` then ``"``, where its
    tokenizer's draft has `` {"``: the draft's rest is dropped, the model's tokens stand."""
    _, tokenizer, _ = loaded()
    question = "What is the weather like in Paris today?"
    on, forced, _ = answer(True, question, 64)
    off, _, _ = answer(False, question, 64)
    assert on == off and forced > 0
    split = tokenizer.encode(' {', add_special_tokens=False) + tokenizer.encode('"', add_special_tokens=False)
    whole = tokenizer.encode(' {"', add_special_tokens=False)
    assert len(whole) == 1 and len(split) == 2  # the tokenizer's draft differs from the model's cut
    assert any(on[i:i + 2] == split for i in range(len(on) - 1))


def test_a_tight_budget_is_kept() -> None:
    """Forced spans count against the budget: with just the room the shortest call needs, the call
    still closes within it, every token allowed under what was left at its place."""
    _, _, vocab = loaded()
    grammar = Grammar(TOOLS, vocab, Hermes())
    fewest = Machine(grammar, tool_choice="required").min_tokens()
    for budget in (fewest, fewest + 2):
        ids, forced, _ = answer(True, "Weather in a city with a very long name?", budget)
        assert forced > 0 and len(ids) <= budget
        replay = Machine(grammar, tool_choice="required")
        for i, token in enumerate(ids):
            assert token in replay.allowed_token_ids(budget - i).tolist() and replay.advance(token)
        assert replay.advanced.calls_completed == 1


def test_the_switch_is_on_by_default_and_turns_off() -> None:
    from tooldec.serving.cli import parser

    model, tokenizer, vocab = loaded()
    assert LlamaCppGenerator(model, tokenizer, vocab).jump_forward
    assert not LlamaCppGenerator(model, tokenizer, vocab, jump_forward=False).jump_forward
    assert parser().parse_args([]).jump_forward is True  # with any --parallel
    assert parser().parse_args(["--no-jump-forward"]).jump_forward is False
