"""From generated tokens to what an OpenAI client receives: reasoning, content deltas and tool calls.

Streamed and non-streamed answers are made from the same events, so they agree. Text is content
until a call begins; bytes that may still start an opener (or the reasoning close) are held back,
never sent and taken back. A reasoning section's text is ``reasoning_content``, as vLLM returns it.
"""

from __future__ import annotations

import codecs
from collections.abc import Collection
from dataclasses import dataclass

from ..dialects import Dialect, ToolCall
from ..dialects.watch import OpenerWatch

__all__ = ["Assembler", "CallEvent", "ContentEvent", "Event", "ReasoningEvent"]


@dataclass(frozen=True)
class ContentEvent:
    """More text of the message's ``content``."""

    text: str


@dataclass(frozen=True)
class ReasoningEvent:
    """More text of the message's ``reasoning_content``."""

    text: str


@dataclass(frozen=True)
class CallEvent:
    """A complete tool call, the ``index``-th of the message."""

    index: int
    call: ToolCall


Event = ContentEvent | ReasoningEvent | CallEvent


class Assembler:
    """Turns one generation, token by token, into content and call events. ``watch``: hold back
    text that may still open a call (a request with tools); ``names``: the request's tool names,
    for a dialect whose opener names a tool (Pythonic's ``call``), as the engine sees them.

    Examples:
        >>> from tooldec.dialects import Hermes
        >>> a = Assembler(Hermes())
        >>> a.feed(b"Sure. <tool", in_call=False)
        [ContentEvent(text='Sure. ')]
        >>> a.feed(b'_call>\\n{"name": "f", "arguments": {}}\\n</tool_call>', in_call=True)
        []
        >>> [(type(e).__name__, getattr(e, "index", None)) for e in a.feed(b"", in_call=False)]
        [('CallEvent', 0)]
        >>> a.content, len(a.calls)
        ('Sure. ', 1)
    """

    def __init__(self, dialect: Dialect, watch: bool = True, names: Collection[str] | None = None) -> None:
        self.dialect = dialect
        self.watch = OpenerWatch(dialect, names) if watch else None
        self.raw = b""
        self.content = ""
        self.calls: list[ToolCall] = []
        self._sent = 0  # bytes of ``raw`` already given out, as content or as a call
        self._call_start: int | None = None  # byte offset of the call being written
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self.reasoning = ""
        self._thinking_from: int | None = None  # byte offset of the reasoning text, while in the section
        self._thought = 0  # bytes of reasoning text given out
        self._reasoning_decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._after_reasoning = False  # the answer's leading whitespace is not content
        self._prefix = dialect.answer_prefix.encode()  # still to be left out of the content

    @property
    def text(self) -> str:
        return self.raw.decode("utf-8", errors="replace")

    def feed(self, data: bytes, *, in_call: bool, in_reasoning: bool = False) -> list[Event]:
        """Take the bytes of one more token, and where the grammar now is."""
        self.raw += data
        events: list[Event] = []
        if in_reasoning or self._thinking_from is not None:
            answer = self._reason(events, closed=not in_reasoning)
            if answer is None:
                return events
            data = answer
        watch = self.watch
        if watch is not None:
            watch.feed(data)
        if self._call_start is None:
            if in_call:
                start = watch.call_start if watch is not None and watch.call_start is not None else self._sent
                self._call_start = max(start, self._sent)
                self._say(self._call_start, events)
            else:
                self._say(len(self.raw) - (watch.held if watch is not None else 0), events)
        elif not in_call:
            self._collect(events)
        return events

    def finish(self) -> list[Event]:
        """The generation ended: flush held text (no call began) or the last calls."""
        events: list[Event] = []
        if self._thinking_from is not None:  # the section never closed: all of it is reasoning
            self._give_reasoning(len(self.raw), events, final=True)
            return events
        if self._call_start is None:
            self._say(len(self.raw), events, final=True)
        else:
            self._collect(events)
        return events

    def _reason(self, events: list[Event], *, closed: bool) -> bytes | None:
        """Reasoning text up to what may still start the close; the answer's bytes after it once it
        closed (``None`` while open)."""
        reasoning = self.dialect.reasoning
        assert reasoning is not None  # only a dialect with a section reasons
        opening, closing = reasoning.open.encode(), reasoning.close.encode()
        if self._thinking_from is None:
            at = -1 if reasoning.inside_at_start and not self._thought else self.raw.find(opening)
            self._thinking_from = 0 if at < 0 else at + len(opening)
            self._sent = self._thinking_from
        start = self._thinking_from
        if not closed:
            end = len(self.raw)
            for keep in range(min(len(closing) - 1, end - start), 0, -1):  # a partial close is held back
                if closing.startswith(self.raw[end - keep:]):
                    end -= keep
                    break
            self._give_reasoning(end, events)
            return None
        close_at = self.raw.find(closing, start + self._thought)
        close_at = len(self.raw) if close_at < 0 else close_at
        self._give_reasoning(close_at, events, final=True)
        self._thinking_from = None
        self._sent = min(len(self.raw), close_at + len(closing))
        self._after_reasoning = True
        if self.watch is not None:
            self.watch.after_reasoning()
        return self.raw[self._sent:]

    def _give_reasoning(self, end: int, events: list[Event], final: bool = False) -> None:
        start = (self._thinking_from or 0) + self._thought
        if end > start or final:
            new = self._reasoning_decoder.decode(self.raw[start:max(end, start)], final=final)
            self._thought = max(end, start) - (self._thinking_from or 0)
            if new:
                self.reasoning += new
                events.append(ReasoningEvent(new))

    def _say(self, end: int, events: list[Event], final: bool = False) -> None:
        """Give out the bytes up to ``end`` as content (less the dialect's answer prefix)."""
        if self._prefix:
            written = self.raw[self._sent:end]
            if written.startswith(self._prefix):
                self._sent += len(self._prefix)
                self._prefix = b""
            elif self._prefix.startswith(written) and not final:
                return  # it may still be the prefix
            else:
                self._prefix = b""
        if end > self._sent or final:
            new = self._decoder.decode(self.raw[self._sent:end], final=final)
            self._sent = max(end, self._sent)
            if self._after_reasoning:  # the blank lines between the reasoning and the answer
                new = new.lstrip()
                self._after_reasoning = not new
            if new:
                self.content += new
                events.append(ContentEvent(new))

    def _collect(self, events: list[Event]) -> None:
        text = self.raw[self._call_start or 0:].decode("utf-8", errors="replace")
        for call in self.dialect.parse_calls(text):  # the span holds only the calls just written
            events.append(CallEvent(len(self.calls), call))
            self.calls.append(call)
        self._call_start = None
        self._sent = len(self.raw)
        if self.watch is not None:
            self.watch.after_call()
