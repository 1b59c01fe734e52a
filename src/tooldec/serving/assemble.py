"""From generated tokens to what an OpenAI client receives: content deltas and tool calls.

Streaming and non-streaming responses are both made from these events, so a streamed answer
put together is the non-streamed one. Text is content until a call begins; the bytes that could
still be the start of a call opener are held back (never sent as content and then taken back),
and once the grammar is inside a call nothing more is content: the calls are parsed with the
dialect's own ``parse_calls`` as each one closes and sent as ``tool_calls``.
"""

from __future__ import annotations

import codecs
from collections.abc import Sequence
from dataclasses import dataclass

from ..dialects import Dialect, ToolCall

__all__ = ["Assembler", "CallEvent", "ContentEvent", "Event", "held_suffix"]


@dataclass(frozen=True)
class ContentEvent:
    """More text of the message's ``content``."""

    text: str


@dataclass(frozen=True)
class CallEvent:
    """A complete tool call, the ``index``-th of the message."""

    index: int
    call: ToolCall


Event = ContentEvent | CallEvent


def held_suffix(text: str, openers: Sequence[str]) -> int:
    """Length of the longest end of ``text`` that is a proper prefix of an opener.

    Examples:
        >>> held_suffix("Let me check <tool", ["<tool_call>"]), held_suffix("Done.", ["<tool_call>"])
        (5, 0)
    """
    best = 0
    for opener in openers:
        for size in range(min(len(opener) - 1, len(text)), best, -1):
            if text.endswith(opener[:size]):
                best = size
                break
    return best


class Assembler:
    """Turns one generation, token by token, into content and call events.

    Args:
        dialect: Parses the calls (every opener form it declares).
        openers: Texts a call can begin with (held back from content until decided).

    Examples:
        >>> from tooldec.dialects import Hermes
        >>> a = Assembler(Hermes(), ["<tool_call>"])
        >>> a.feed(b"Sure. <tool", in_call=False)
        [ContentEvent(text='Sure. ')]
        >>> a.feed(b'_call>\\n{"name": "f", "arguments": {}}\\n</tool_call>', in_call=True)
        []
        >>> [(type(e).__name__, getattr(e, "index", None)) for e in a.feed(b"", in_call=False)]
        [('CallEvent', 0)]
        >>> a.content, len(a.calls)
        ('Sure. ', 1)
    """

    def __init__(self, dialect: Dialect, openers: Sequence[str]) -> None:
        self.dialect = dialect
        self.openers = tuple(o for o in openers if o)
        self.text = ""
        self.content = ""
        self.calls: list[ToolCall] = []
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._call_start: int | None = None

    def feed(self, data: bytes, *, in_call: bool) -> list[Event]:
        """Take the bytes of one more token; ``in_call``: the grammar is now inside a call."""
        self.text += self._decoder.decode(data)
        events: list[Event] = []
        if self._call_start is None:
            if in_call:
                self._call_start = self._opener_start()
                self._say(self.text[: self._call_start], events)
            else:
                self._say(self.text[: len(self.text) - held_suffix(self.text, self.openers)], events)
        elif not in_call:
            self._collect(events)
        return events

    def finish(self) -> list[Event]:
        """The generation ended: flush held text (no call began) or the last calls."""
        self.text += self._decoder.decode(b"", final=True)
        events: list[Event] = []
        if self._call_start is None:
            self._say(self.text, events)
        else:
            self._collect(events)
        return events

    def _opener_start(self) -> int:
        """Where the call that just began starts: the last opener at or after the sent content,
        else (an opener form not listed) right after the content already sent."""
        starts = [self.text.rfind(o, len(self.content)) for o in self.openers]
        found = [s for s in starts if s >= 0]
        return max(found) if found else len(self.content)

    def _say(self, upto: str, events: list[Event]) -> None:
        new = upto[len(self.content):]
        if new:
            self.content += new
            events.append(ContentEvent(new))

    def _collect(self, events: list[Event]) -> None:
        calls = self.dialect.parse_calls(self.text[self._call_start or 0:])
        for call in calls[len(self.calls):]:
            events.append(CallEvent(len(self.calls), call))
            self.calls.append(call)
