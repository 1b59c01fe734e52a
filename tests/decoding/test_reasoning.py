"""Reasoning sections as a mode, and the texts free text refuses, on Qwen3's real vocabulary.

Inside ``<think>`` ... ``</think>`` nothing commits to a call; the section must close before the
output ends; a budget (and ``max_reasoning_tokens``) keeps room for its close and for a call that
must follow it; a call-like text written there is counted apart, never as a call or a broken one.
"""

from __future__ import annotations

import random

import pytest
import tokenizers

from tooldec.decoding import Compiler, Grammar, Machine, Mode
from tooldec.dialects import DEEPSEEK_THINKING, Hermes, Qwen3, Reasoning
from tooldec.errors import BudgetError
from tooldec.models import tokenizer_json_path
from tooldec.tokens import Vocabulary


def get_weather(city: str) -> dict[str, str]:
    """Current weather in a city."""
    return {"city": city}


@pytest.fixture(scope="module")
def qwen_tokenizer() -> tokenizers.Tokenizer:
    return tokenizers.Tokenizer.from_file(str(tokenizer_json_path("qwen3")))


@pytest.fixture(scope="module")
def grammar(qwen_vocab: Vocabulary) -> Grammar:
    return Compiler(qwen_vocab, Qwen3()).compile([get_weather])


def feed(machine: Machine, tokenizer: tokenizers.Tokenizer, text: str) -> bool:
    """Every token of ``text`` as Qwen3 encodes it; whether each was allowed."""
    return all(machine.advance(t) for t in tokenizer.encode(text, add_special_tokens=False).ids)


CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'


def test_a_call_written_while_reasoning_is_not_a_call(grammar: Grammar, qwen_tokenizer: tokenizers.Tokenizer) -> None:
    machine = Machine(grammar)
    assert feed(machine, qwen_tokenizer, '<think>\nMaybe {"name": "wrong_tool"} or ' + CALL + "?")
    assert machine.advanced.mode is Mode.REASONING and machine.advanced.calls_completed == 0
    assert feed(machine, qwen_tokenizer, "\n</think>\n\n" + CALL)
    assert machine.advanced.calls_completed == 1
    text = "<think>\nMaybe " + CALL + "\n</think>\n\n" + CALL
    scan = grammar.dialect.scan(text)
    assert len(scan.calls) == 1 and not scan.broken and len(scan.in_reasoning) == 1
    assert "Maybe" in scan.reasoning


def test_the_section_must_close_before_the_end(grammar: Grammar, qwen_tokenizer: tokenizers.Tokenizer) -> None:
    machine = Machine(grammar)
    assert feed(machine, qwen_tokenizer, "<think>\nhmm")
    eos = next(iter(grammar.vocab.eos_ids))
    assert not machine.advance(eos)
    assert eos not in set(machine.allowed_token_ids().tolist())
    assert feed(machine, qwen_tokenizer, "</think>\n\nDone.")
    assert machine.advance(eos)


def test_required_lets_the_model_reason_then_forces_the_call(grammar: Grammar,
                                                             qwen_tokenizer: tokenizers.Tokenizer) -> None:
    reasoned = Machine(grammar, tool_choice="required")
    assert feed(reasoned, qwen_tokenizer, "<think>\nThe user wants weather.\n</think>\n\n" + CALL)
    assert reasoned.advanced.calls_completed == 1
    prose = Machine(grammar, tool_choice="required")
    assert feed(prose, qwen_tokenizer, "<think>\nok\n</think>\n\n")
    assert not feed(prose, qwen_tokenizer, "The weather")  # after reasoning, only the call


@pytest.mark.parametrize("seed", range(6))
def test_a_required_call_closes_in_budget_whatever_the_reasoning(grammar: Grammar, seed: int) -> None:
    """Random walks that reason as long as they may: the call still closes in the budget."""
    rng = random.Random(seed)
    machine = Machine(grammar, tool_choice="required")
    budget = machine.min_tokens() + rng.randint(2, 60)
    machine.check_budget(budget)
    think = grammar.vocab.longest_match(b"<think>")
    assert machine.advance(think[0])  # the model chose to reason
    for left in range(budget - 1, 0, -1):
        if machine.advanced.calls_completed:
            break
        allowed = machine.allowed_token_ids(budget=left)
        assert allowed.size, machine.advanced.position
        assert machine.advance(int(allowed[rng.randrange(allowed.size)]))
    assert machine.advanced.calls_completed == 1


def test_max_reasoning_tokens_closes_the_section(grammar: Grammar, qwen_tokenizer: tokenizers.Tokenizer) -> None:
    machine = Machine(grammar, max_reasoning_tokens=6)
    assert feed(machine, qwen_tokenizer, "<think>\nOne two")
    close = grammar.vocab.longest_match(b"</think>")
    while machine.advanced.mode is Mode.REASONING:
        allowed = machine.allowed_token_ids()
        if allowed.size == 1:
            assert int(allowed[0]) == close[0]
        assert machine.advanced.reasoning_tokens <= 6
        machine.advance(int(allowed[0]) if allowed.size == 1 else qwen_tokenizer.encode(" more").ids[0])
    assert machine.advanced.reasoning_tokens <= 6 and machine.advanced.mode is Mode.TEXT


def test_reasoning_inside_at_start(qwen_vocab: Vocabulary, qwen_tokenizer: tokenizers.Tokenizer) -> None:
    """DeepSeek-R1 style templates open the section in the prompt: the output starts inside it."""
    grammar = Compiler(qwen_vocab, Hermes(reasoning=DEEPSEEK_THINKING)).compile([get_weather])
    machine = Machine(grammar, tool_choice="required")
    assert machine.advanced.mode is Mode.REASONING
    assert feed(machine, qwen_tokenizer, 'I will call it: {"name": "x"}\n</think>\n\n' + CALL)
    assert machine.advanced.calls_completed == 1
    with pytest.raises(BudgetError):
        Machine(grammar, tool_choice="required").check_budget(3)


def test_free_text_refuses_a_written_tool_result(qwen_vocab: Vocabulary, qwen_tokenizer: tokenizers.Tokenizer) -> None:
    grammar = Compiler(qwen_vocab, Hermes()).compile([get_weather])
    machine = Machine(grammar)
    assert feed(machine, qwen_tokenizer, CALL + "\n")
    assert not feed(machine, qwen_tokenizer, "<tool_response>\n{}")
    assert not Machine(grammar, tool_choice="none").accept_string(b"Result: <tool_response>")


@pytest.mark.parametrize("near", ['{"name}: "get_weather"', '{"name ": 1}', '{ "name\\"": 1}'])
def test_free_text_refuses_a_near_miss_of_a_call_object(grammar: Grammar, near: str) -> None:
    machine = Machine(grammar)
    assert not machine.accept_string(near.encode())
    assert grammar.dialect.scan(near).broken


@pytest.mark.parametrize("other", ['{"names": ["a"]}', '{"name_first": "Ada"}', "{'name}: 1"])
def test_other_keys_stay_free(grammar: Grammar, other: str) -> None:
    machine = Machine(grammar)
    assert machine.accept_string(other.encode())
    assert machine.advanced.mode is Mode.TEXT


def test_reasoning_option_is_part_of_the_grammar_key(qwen_vocab: Vocabulary) -> None:
    plain = Hermes(reasoning=None)
    thinking = Hermes(reasoning=Reasoning("<think>", "</think>"))
    assert plain.key != thinking.key and Qwen3().key != Qwen3(reasoning=None).key
    machine = Machine(Compiler(qwen_vocab, plain).compile([get_weather]))
    assert machine.accept_string(b'<think>{"name": "get_weather", "arguments": {"city": "x"}}')
    assert machine.advanced.calls_completed == 1  # without a section, the object is a call


def test_a_loop_can_name_what_a_refused_pick_would_have_written(qwen_vocab: Vocabulary,
                                                                qwen_tokenizer: tokenizers.Tokenizer) -> None:
    grammar = Compiler(qwen_vocab, Hermes()).compile([get_weather])
    machine = Machine(grammar)
    assert feed(machine, qwen_tokenizer, CALL + "\n")
    (whole,) = qwen_tokenizer.encode("<tool_response>", add_special_tokens=False).ids  # one token in Qwen3
    assert not machine.advance(whole) and machine.advanced.refusal(whole) == "result"
    assert feed(machine, qwen_tokenizer, "<tool_response")  # the same text in pieces, up to its last byte
    last = qwen_tokenizer.token_to_id(">")
    assert not machine.advance(last) and machine.advanced.refusal(last) == "result"
    assert machine.advanced.refusal(qwen_tokenizer.encode(" done", add_special_tokens=False).ids[0]) is None
