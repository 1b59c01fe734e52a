"""What one turn did: every call with its outcome, every invalid call, tokens and time. The
runtime never raises because a model or a tool misbehaved (DESIGN invariant 6): it writes it here."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from ..dialects.base import ToolCall

__all__ = ["CallRecord", "Event", "EventKind", "InvalidCall", "InvalidKind", "Result", "Trace"]


class InvalidKind(enum.Enum):
    """Why a call the model wrote could not be run (the paper's three kinds of tool-call error)."""

    UNPARSEABLE = "unparseable"
    """The call was started (the trigger is in the text) but does not parse: bad syntax or cut off."""
    UNKNOWN_TOOL = "unknown_tool"
    """The call parses but names a tool that is not in the tool set."""
    INVALID_ARGUMENTS = "invalid_arguments"
    """The call names a known tool but its arguments break the tool's JSON Schema."""


@dataclass(frozen=True)
class InvalidCall:
    """A call that was not run, and why; ``call`` is ``None`` when it did not even parse."""

    kind: InvalidKind
    message: str
    call: ToolCall | None = None


@dataclass(frozen=True)
class CallRecord:
    """One call and its outcome.

    Attributes:
        call: The call as parsed from the model's output.
        result: The result as the text given back to the model (JSON, or the string a tool
            returned); ``None`` if the call failed.
        error: Why it failed (an exception, a timeout, an unserialisable result, an invalid
            call); ``None`` if it succeeded.
        seconds: Wall time spent running the tool (0 for a call that was never run).
        truncated_from: The observation's length in tokens before it was cut to fit the
            context (the cut text says so); ``None`` when it was not cut.
    """

    call: ToolCall
    result: str | None
    error: str | None
    seconds: float
    truncated_from: int | None = None

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def observation(self) -> str:
        """What the model reads back: the result, or ``error: ...``."""
        return self.result if self.result is not None else f"error: {self.error}"


class EventKind(enum.Enum):
    """What an :class:`Event` holds, in the order things happened in a turn."""

    TEXT = "text"
    """Text the model generated (calls included, as written)."""
    RESULT = "result"
    """A tool result (or error) written back into the context, as the model will read it."""
    INVALID = "invalid"
    """A call that was not run; the text says why."""
    NOTICE = "notice"
    """The turn ended early (the context is full); the text says why."""


@dataclass(frozen=True)
class Event:
    """One entry of the turn's log; ``call`` ties a result to its call."""

    kind: EventKind
    text: str
    call: ToolCall | None = None


@dataclass
class Trace:
    """Counts and timings of one turn (``seconds``: tools included).

    Attributes:
        masked_steps, forced_steps: Decoding steps masked (all, when constrained), and of those
            the tokens the grammar forced that the model confirmed (jump-forward).
        generations: Model runs: one, plus one after each tool round.
        invalid: Calls that were not run (always empty with constrained decoding).
        refusals: What the model tried to write that the call format refuses, by name: the masks
            kept it out.
        stop_reason: Why the turn ended before the model finished (the context is full), else ``None``.
    """

    tokens_generated: int = 0
    seconds: float = 0.0
    masking_seconds: float = 0.0
    masked_steps: int = 0
    forced_steps: int = 0
    generations: int = 0
    events: list[Event] = field(default_factory=list)
    invalid: list[InvalidCall] = field(default_factory=list)
    refusals: dict[str, int] = field(default_factory=dict)
    stop_reason: str | None = None

    @property
    def invalid_calls(self) -> int:
        return len(self.invalid)

    @property
    def masking_seconds_per_step(self) -> float:
        """Mean masking time of one decoding step (0 when nothing was masked)."""
        return self.masking_seconds / self.masked_steps if self.masked_steps else 0.0


@dataclass
class Result:
    """What :meth:`ToolDecoder.run` returns.

    Attributes:
        text: The assistant's whole turn as the context now holds it: generated text with the
            calls as written and, for dialects that write results into the text, the results.
        answer: The text generated after the last tool round (the model's final words).
        calls: Every call that parsed, in order, with its outcome (invalid ones included, with
            their ``error``).
        trace: Counts, timings and the event log.
    """

    text: str
    answer: str
    calls: list[CallRecord]
    trace: Trace
