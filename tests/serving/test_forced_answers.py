"""A forced answer (``tool_choice`` required or a named tool) is its calls: the worker ends it
where the model, after them, writes text that opens no call, and sends no content. The tokens are
the test's (SmolLM2's own encoding of a call and of text after it), taken through a real
:class:`~tooldec.serving.worker.JobRun` on the embedded SmolLM2's worker, cursor and assembler."""

from __future__ import annotations

from typing import Any

import pytest

from .helpers import TOOLS, service_on

pytest.importorskip("starlette", reason="the serve extra is not installed")

CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'


def take_all(service: Any, tool_choice: str, text: str) -> tuple[list[Any], int, Any]:
    """Feed ``text``'s tokens to a new job's run until it ends: its events, the tokens taken, its Done."""
    from tooldec.serving.worker import Job, JobRun

    events: list[Any] = []
    job = Job(prompt_ids=[1], specs=TOOLS, key="", tool_choice=tool_choice, parallel_tool_calls=True,
              max_tokens=200, temperature=0.0, seed=0, emit=events.append)
    run = JobRun(service.worker, job)
    assert run.refused is None and run.machine is not None
    tokens = list(service.tokenizer.encode(text, add_special_tokens=False))
    taken = 0
    for token in tokens:
        run.machine.advance(token)
        taken += 1
        if run.take(token):
            break
    return events, taken, run.end()


@pytest.mark.parametrize("tool_choice", ["required", "get_weather"])
def test_text_after_the_calls_of_a_forced_answer_ends_it(smollm2_llama: tuple[Any, Any], tool_choice: str) -> None:
    from tooldec.serving.assemble import CallEvent, ContentEvent

    service = service_on(smollm2_llama)
    text = CALL + "\n\nThe weather in Paris is sunny today."
    events, taken, done = take_all(service, tool_choice, text)
    assert [type(event) for event in events] == [CallEvent]
    assert events[0].call.name == "get_weather"
    assert done.finish_reason == "tool_calls"
    assert taken < len(service.tokenizer.encode(text, add_special_tokens=False))
    assert not any(isinstance(event, ContentEvent) for event in events)


def test_a_second_call_after_whitespace_is_kept(smollm2_llama: tuple[Any, Any]) -> None:
    from tooldec.serving.assemble import CallEvent

    service = service_on(smollm2_llama)
    events, _, done = take_all(service, "required", CALL + "\n" + CALL + "\n\nDone.")
    assert [type(event) for event in events] == [CallEvent, CallEvent]
    assert done.finish_reason == "tool_calls"


def test_text_after_a_call_in_auto_is_content(smollm2_llama: tuple[Any, Any]) -> None:
    from tooldec.serving.assemble import CallEvent, ContentEvent

    service = service_on(smollm2_llama)
    events, _, done = take_all(service, "auto", CALL + "\n\nThe weather in Paris is sunny today.")
    assert isinstance(events[0], CallEvent)
    assert "".join(event.text for event in events if isinstance(event, ContentEvent)).strip() == \
        "The weather in Paris is sunny today."
    assert done.finish_reason == "length"
