"""Jump-forward on the real SmolLM2 GGUF (llama.cpp) and its tokenizer: the tokens the grammar
forces are the tokenizer's own, evaluated in one batch; the calls stay valid, greedy text equals
the loop without it, budgets hold, and the switch turns it off."""

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
def test_greedy_calls_are_valid_and_equal_the_loop_without_jumps(question: str) -> None:
    _, _, vocab = loaded()
    on, forced, jumps = answer(True, question, 64)
    off, none, _ = answer(False, question, 64)
    assert forced > jumps > 0 and none == 0  # several tokens a batch
    assert vocab.decode(on) == vocab.decode(off)  # the same text (the tokens may be cut differently)
    grammar = Grammar(TOOLS, vocab, Hermes())
    replay = Machine(grammar, tool_choice="required")
    assert all(replay.advance(token) for token in on) and replay.advanced.calls_completed == 1
    calls = Hermes().parse_calls(vocab.decode(on).decode())
    assert calls and all(TOOLS[c.name].validate_arguments(c.arguments) == [] for c in calls)


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


def test_the_switch_is_off_by_default_and_serve_turns_it_on() -> None:
    from tooldec.serving.cli import parser

    model, tokenizer, vocab = loaded()
    assert not LlamaCppGenerator(model, tokenizer, vocab).jump_forward
    assert parser().parse_args(["--jump-forward"]).jump_forward and not parser().parse_args([]).jump_forward
