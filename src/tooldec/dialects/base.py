"""What a call format must provide: its grammar pieces, a parser and a result renderer.

A call is written as ``trigger`` (a special token or text that enters tool mode), ``head`` (bytes
before the tool name), the name, then the tool's ``tail`` (the bytes after the name up to the
end of the call, arguments included). The engine joins the pieces: the names come from the
tool set's trie, the tail's automaton is compiled the first time its tool is chosen.
"""

from __future__ import annotations

import abc
import json
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ..automata.json_schema import SchemaCompiler, Style
from ..automata.nfa import NFA, Frag
from ..errors import UnsupportedSchemaError
from ..tools import Tool

__all__ = ["Dialect", "ToolCall", "NEXT_CALL", "require_plain_properties"]

NEXT_CALL = "next_call"
"""Mark on the tail state where another name begins (list formats: ``[a(...), b(...)]``)."""


_COMBINATORS = ("$ref", "allOf", "anyOf", "oneOf")


def require_plain_properties(tool: Tool, why: str) -> None:
    """Formats that write arguments one by one (positional, keywords) need a plain list of
    ``properties`` at the top level, not a combination of schemas.

    Raises:
        UnsupportedSchemaError: Naming the tool and the combining keyword; ``why`` says why.
    """
    for word in _COMBINATORS:
        if word in tool.parameters:
            raise UnsupportedSchemaError(
                f"{why}; write the parameters as plain 'properties'", tool=tool.name, pointer="", keyword=word
            )


@dataclass(frozen=True)
class ToolCall:
    """A completed call, OpenAI-shaped: ``function.arguments`` is a JSON string."""

    name: str
    arguments: Mapping[str, Any]
    id: str = field(default_factory=lambda: f"call_{uuid.uuid4().hex[:12]}")

    def to_openai(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": json.dumps(self.arguments, ensure_ascii=False)},
        }


class Dialect(abc.ABC):
    """One call format. Subclasses set the class attributes and build the tail.

    Attributes:
        trigger: text that switches to tool mode (a special token's text or plain text), or
            ``None`` when calls start at the beginning of the output only.
        head: bytes written after the trigger and before the name.
        style: how argument values are spelled (syntax and whitespace).
        stop_after_call: the runtime runs the tool as soon as a call closes and writes the result
            into the text (ToolkenGPT, ReAct); otherwise calls run when the model stops (Hermes).
    """

    name: ClassVar[str]
    trigger: ClassVar[str | None]
    head: ClassVar[bytes]
    style: ClassVar[Style] = Style()
    stop_after_call: ClassVar[bool] = False
    tail_literal: ClassVar[bytes] = b""
    """Bytes every tail of this dialect starts with: a token that runs from a name into them is
    checked against these without building the tool's automaton (a test keeps them honest)."""

    @abc.abstractmethod
    def tail(self, nfa: NFA, tool: Tool, *, next_call: bool) -> Frag:
        """The bytes after the tool name up to the end of the call.

        The first byte must not be a name character. ``next_call`` asks for a branch to another
        call (marked with ``NEXT_CALL`` right where the next name starts), for formats that list
        several calls in one block.
        """

    @abc.abstractmethod
    def parse_calls(self, text: str) -> list[ToolCall]:
        """The complete calls in generated text, in order."""

    @abc.abstractmethod
    def render_result(self, call: ToolCall, result: str) -> str:
        """Text that carries a tool's result back into the context (for text formats)."""

    @abc.abstractmethod
    def format_call(self, call: ToolCall) -> str:
        """The call written as this format writes it (few-shot prompts, history, round trips)."""

    def check_tool(self, tool: Tool) -> None:
        """Raise a ``ToolRegistrationError`` if this format cannot write calls to ``tool``.

        Called for every tool when a grammar is made, so that no error waits for decode time.
        """

    def arguments(self, nfa: NFA, tool: Tool) -> Frag:
        """The arguments object of ``tool`` as this dialect's style writes it."""
        return SchemaCompiler(nfa, tool.parameters, self.style).value(tool.parameters)

    @property
    def trigger_bytes(self) -> bytes | None:
        return None if self.trigger is None else self.trigger.encode()

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"
