"""Fault injection: tools that misbehave in every way a turn must survive, on the real SmolLM2.

Each case runs a whole turn (the model is made to call the faulty tool first): the turn returns,
its trace holds the call and its observation, and the model goes on after it. The model runs on
llama.cpp (as in the trial that found these faults) with a small context (1,024 tokens), which
the runtime reads from the model, so that overflowing it is cheap to test.
"""

from __future__ import annotations

import enum
from typing import Any

import pytest

from tooldec.errors import ContextLengthError
from tooldec.models import smollm2_gguf_path
from tooldec.runtime import EventKind, Result, ToolDecoder
from tooldec.tokens import Vocabulary

pytest.importorskip("llama_cpp", reason="the llama extra is not installed (make setup installs it)")

WINDOW = 1024
PAGE = "lorem ipsum dolor sit amet " * 1600  # 43 KB, about 16,000 tokens


def fetch_page(url: str) -> str:
    """Fetch a web page."""
    return PAGE


def bad_text(url: str) -> str:
    """Fetch a page whose text is broken."""
    return "bad \udc80 text"


def deep_result(n: int) -> Any:
    """Build a nested list."""
    value: Any = []
    for _ in range(200_000):
        value = [value]
    return value


def circular_result(n: int) -> Any:
    """Build a record that points at itself."""
    value: dict[str, Any] = {"n": n}
    value["self"] = value
    return value


class Unprintable(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no message")


def unprintable_error(n: int) -> int:
    """Fail with an exception that cannot say what went wrong."""
    raise Unprintable()


class Unit(enum.Enum):
    CELSIUS = "celsius"
    FAHRENHEIT = "fahrenheit"


def temperature(city: str, unit: Unit) -> str:
    """Today's temperature in a city."""
    if not isinstance(unit, Unit):
        raise TypeError(f"unit is a {type(unit).__name__}, not a Unit")
    return f"21 degrees {unit.value} in {city}"


@pytest.fixture(scope="module")
def small_context() -> tuple[Any, Any, Vocabulary]:
    """SmolLM2 on llama.cpp with a 1,024-token context, one thread."""
    from tooldec.backends import load

    llm, tokenizer, vocab, _ = load(smollm2_gguf_path(), "llamacpp", threads=1, context=WINDOW)
    return llm, tokenizer, vocab


def turn(model: tuple[Any, Any, Vocabulary], tool: Any, *, question: str = "Use the tool.", **options: Any) -> Result:
    llm, tokenizer, vocab = model
    options = {"max_calls_per_turn": 1, "parallel_tool_calls": False, "max_new_tokens": 64, **options}
    decoder = ToolDecoder(llm, tokenizer, [tool], vocab=vocab, tool_choice=tool.__name__, **options)
    return decoder.run([{"role": "user", "content": question}])


def test_a_huge_result_is_cut_to_fit_and_says_so(small_context: tuple[Any, Any, Vocabulary]) -> None:
    result = turn(small_context, fetch_page)
    assert ToolDecoder(*small_context[:2], [fetch_page], vocab=small_context[2]).context_window == WINDOW
    (record,) = result.calls
    tokenizer = small_context[1]
    total = len(tokenizer.encode(PAGE, add_special_tokens=False))
    assert record.ok and record.truncated_from == total
    assert record.result is not None and record.result.endswith(
        f"[truncated by tooldec: the result had {total} tokens; the first {_kept(record.result)} are shown]")
    assert len(tokenizer.encode(record.result, add_special_tokens=False)) <= WINDOW // 2
    assert result.trace.generations == 2 and result.trace.stop_reason is None  # the model read it and went on


def test_the_share_of_the_context_a_result_may_take_is_configurable(small_context: tuple[Any, Any, Vocabulary]) -> None:
    small = turn(small_context, fetch_page, result_share=0.1).calls[0].result
    large = turn(small_context, fetch_page, result_share=0.6).calls[0].result
    assert small is not None and large is not None
    assert 0 < _kept(small) < WINDOW * 0.1 < _kept(large) < WINDOW * 0.6


def test_a_full_context_ends_the_turn_with_its_trace(small_context: tuple[Any, Any, Vocabulary]) -> None:
    result = turn(small_context, fetch_page, result_share=1.0, context_window=512)
    assert result.calls and result.calls[0].truncated_from is not None
    assert result.trace.stop_reason is not None and result.trace.stop_reason.startswith("the context is full")
    assert result.trace.events[-1].kind is EventKind.NOTICE


def test_a_prompt_that_does_not_fit_is_a_clear_error(small_context: tuple[Any, Any, Vocabulary]) -> None:
    with pytest.raises(ContextLengthError, match=r"context holds 64: load the model with a larger context"):
        turn(small_context, fetch_page, context_window=64)


@pytest.mark.parametrize(("tool", "observation"), [
    (bad_text, "bad \ufffd text"),
    (deep_result, "error: result of deep_result is not JSON-serialisable (nested too deeply)"),
    (circular_result, "error: result of circular_result is not JSON-serialisable (it contains itself)"),
    (unprintable_error, "error: unprintable_error raised Unprintable (its message cannot be read: RuntimeError)"),
])
def test_hostile_results_are_observations_and_the_turn_goes_on(small_context: tuple[Any, Any, Vocabulary],
                                                               tool: Any, observation: str) -> None:
    result = turn(small_context, tool)
    (record,) = result.calls
    assert record.observation == observation
    assert [event.kind for event in result.trace.events][:3] == [EventKind.TEXT, EventKind.RESULT, EventKind.TEXT]
    assert result.trace.generations == 2


def test_an_enum_parameter_receives_the_member(small_context: tuple[Any, Any, Vocabulary]) -> None:
    result = turn(small_context, temperature, question="How warm is it in Oslo, in fahrenheit?")
    (record,) = result.calls
    unit = record.call.arguments["unit"]
    assert record.ok and record.result == f"21 degrees {unit} in {record.call.arguments['city']}"


def _kept(text: str) -> int:
    return int(text.rsplit("the first ", 1)[1].split(" ")[0])
