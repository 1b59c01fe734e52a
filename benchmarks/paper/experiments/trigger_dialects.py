"""Call formats opened by ToolDec's learned ``<T>`` token (Experiment II).

The learned token is a special id of the extended vocabulary (see
``tooldec.learned.generator``), so a dialect whose ``trigger`` is ``"<T>"`` enters tool mode on it
and the grammar writes the rest: the head, a name from *all* the tools, the arguments. The model
reads the call as plain text (``<T>`` itself expands to nothing), the way the benchmark's prompts
write calls.
"""

from __future__ import annotations

from typing import ClassVar

from tooldec.automata.nfa import NFA, Frag
from tooldec.dialects import Hermes, Pythonic, ToolkenGPT
from tooldec.dialects.base import Opener
from tooldec.dialects.hermes import TAG
from tooldec.learned import TRIGGER

__all__ = ["TriggerHermes", "TriggerPythonic", "TriggerToolken"]


class TriggerToolken(ToolkenGPT):
    """FuncQA: ``<T>`` then ``<add>(3, 4)=`` (ToolkenGPT's calls), the result written after ``=``."""

    name: ClassVar[str] = "toolkengpt_trigger"
    trigger: ClassVar[str | None] = TRIGGER
    head: ClassVar[bytes] = b"<"


class TriggerPythonic(Pythonic):
    """KAMEL: ``<T>`` then `` [publisher(title="My Friend Pedro")]`` (one keyword call per answer)."""

    name: ClassVar[str] = "pythonic_trigger"
    trigger: ClassVar[str | None] = TRIGGER
    head: ClassVar[bytes] = b" ["


class TriggerHermes(Hermes):
    """KAMEL: ``<T>`` then ``<tool_call>\\n{"name": "...", "arguments": {...}}\\n</tool_call>``: the
    format Qwen2.5 is trained to call tools in, so the name is chosen where the model expects one.

    ``<T>`` is the only opener (Hermes' own tag and its fenced and bare JSON forms are not), and
    the grammar writes the whole Hermes opener as the head.
    """

    name: ClassVar[str] = "hermes_trigger"
    trigger: ClassVar[str | None] = TRIGGER
    head: ClassVar[bytes] = b'<tool_call>\n{"name": "'

    def declared_openers(self) -> tuple[Opener, ...]:
        return (Opener("tag", TAG, tag=TRIGGER),)

    def head_piece(self, nfa: NFA, form: int) -> Frag:
        return nfa.literal(self.head)
