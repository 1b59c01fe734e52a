"""What a call format must provide: how calls open, their grammar pieces, a parser, a renderer.

Each :class:`Opener` leads to a *form*: after a tag the form's head, after a text opener the
name; then the tool's *tail* up to the end of the call. Which texts count as a call in auto
mode is exactly :meth:`Dialect.openers` (docs/call-formats.md, "What counts as a call in auto mode").
"""

from __future__ import annotations

import abc
import enum
import functools
import json
import re
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ..automata.json_schema import SchemaCompiler, Style, Whitespace
from ..automata.nfa import BLANK_RANGES, NFA, Frag
from ..errors import UnsupportedSchemaError
from ..tokens.markers import spelling
from ..tools import Tool
from .scanning import NAME_OBJECT, JsonForm, scan_json_calls

__all__ = ["Anchor", "CallScan", "Dialect", "JsonObjectDialect", "NEXT_CALL", "Opener", "Reasoning", "Refusal",
           "ToolCall", "json_ws", "line_indent", "near_miss", "require_plain_properties", "spelled_text"]

NEXT_CALL = "next_call"
"""Mark on the tail state where another name begins (list formats: ``[a(...), b(...)]``)."""

_COMBINATORS = ("$ref", "allOf", "anyOf", "oneOf")
_DECODER = json.JSONDecoder()
MAX_WHITESPACE = 24
"""Longest whitespace run between JSON tokens in the loose forms (fenced and bare objects)."""


def require_plain_properties(tool: Tool, why: str) -> None:
    """Formats that write arguments one by one need plain top-level ``properties``, not a
    combination of schemas (``UnsupportedSchemaError`` naming the keyword; ``why`` says why)."""
    for word in _COMBINATORS:
        if word in tool.parameters:
            raise UnsupportedSchemaError(
                f"{why}; write the parameters as plain 'properties'", tool=tool.name, pointer="", keyword=word
            )


def json_space(nfa: NFA) -> Frag:
    """Any run of JSON whitespace, unbounded: inside an opener's text (``{  "name"``), which
    commits to nothing until it is complete."""
    return nfa.star(nfa.byte_ranges(list(BLANK_RANGES)))


def line_indent(nfa: NFA) -> Frag:
    """Any run of spaces and tabs: what may come before an opener at the start of a line."""
    return nfa.star(nfa.byte_ranges([(0x20, 0x20), (0x09, 0x09)]))


def json_ws(nfa: NFA) -> Frag:
    """Optional JSON whitespace between tokens of a loosely written object (pretty printing)."""
    return nfa.blank_run(MAX_WHITESPACE)


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


class Anchor(enum.Enum):
    """Where in free text an opener may begin."""

    ANYWHERE = "anywhere"
    LINE = "line"
    """At the start of the answer or right after a newline."""
    START = "start"
    """Only at the very start of the answer."""


@dataclass(frozen=True)
class Opener:
    """One way a call begins: a ``tag`` (matched by id where it is a special token, else as
    text) or a ``text`` automaton, leading to ``form``; ``head``: the form's head follows a text
    opener too (an object commits at ``{"name"``, then ``: "``)."""

    name: str
    form: int
    tag: str | None = None
    text: Callable[[NFA], Frag] | None = None
    anchor: Anchor = Anchor.ANYWHERE
    head: bool = False
    named: bool = False
    """A real tool name and the form's tail literal follow the text, and commit only at its last
    byte, so the automaton is built per snapshot (``[get_weather(`` commits, ``[see](url)`` is prose)."""

    def __post_init__(self) -> None:
        if (self.tag is None) == (self.text is None):
            raise ValueError(f"opener {self.name!r}: give exactly one of tag and text")
        if self.named and (self.text is None or self.head):
            raise ValueError(f"opener {self.name!r}: a named opener is text, and its name follows it at once")


@dataclass(frozen=True)
class Refusal:
    """Text free text may never write (a ``text`` automaton or a ``tag``, as an opener's): result
    markers, or an opener's near misses (docs/call-formats.md, "What free text may not write")."""

    name: str
    text: Callable[[NFA], Frag] | None = None
    tag: str | None = None
    anchor: Anchor = Anchor.ANYWHERE

    def __post_init__(self) -> None:
        if (self.tag is None) == (self.text is None):
            raise ValueError(f"refusal {self.name!r}: give exactly one of tag and text")


@dataclass(frozen=True)
class Reasoning:
    """A section the model reasons in before it answers (``<think>`` ... ``</think>``).

    Its text is free and never opens a call (a call written there is counted apart, as one in
    reasoning); it must close before the output ends, and a token budget keeps room for the close
    (and for a call that must follow). The delimiters may hold the format's markers.

    Attributes:
        open: The text that begins the section (at the start of the output, after any whitespace).
        close: The text that ends it.
        inside_at_start: The prompt opened the section already (DeepSeek-R1 and QwQ templates end
            with ``<think>\n``): the output starts inside it.
    """

    open: str
    close: str
    inside_at_start: bool = False
    markers: tuple[str, ...] = ()
    """The special tokens the delimiters are written with (Magistral's ``[THINK]``)."""
    refused_inside: tuple[str, ...] = ()
    """Markers the section's text may not hold but in its close: harmony ends a message at each of
    its special tokens, so gpt-oss's analysis text holds none (``benchmarks/formats.py``)."""


@dataclass(frozen=True)
class CallScan:
    """What :meth:`Dialect.scan` finds in a text: the calls, and the call-like text that did not parse."""

    calls: list[ToolCall]
    broken: list[str]
    """Openers that did not become a call and ``"name"`` objects outside one (200 characters each)."""
    in_reasoning: list[str] = field(default_factory=list)
    """Call-like text inside reasoning sections (never a call, never counted as broken)."""
    reasoning: str = ""
    """The text of the reasoning sections, delimiters left out."""


class DefaultType(enum.Enum):
    """The type of :data:`DEFAULT`."""

    DEFAULT = "default"


DEFAULT = DefaultType.DEFAULT
"""An option left at the dialect's own default (``reasoning=None`` turns reasoning off)."""


class Dialect(abc.ABC):
    """One call format. Subclasses set the class attributes and build the tail.

    Attributes:
        trigger: the official opener, or ``None`` when calls start at the beginning of the output only.
        head: bytes written after the official trigger and before the name.
        stop_after_call: the runtime runs the tool as soon as a call closes (ToolkenGPT, ReAct), so
            a token ends where a call ends (``Grammar.walk``); otherwise calls run when the model stops.

    Args:
        openers: Names of the declared openers to keep; ``None``: the dialect's ``default_openers``.
        forced: Openers in use a call that must come first may open with; ``None``: the
            dialect's ``default_forced`` where one is in use, else every opener in use.
        reasoning: The :class:`Reasoning` section the model writes first, ``None`` for none; by
            default the dialect's own.
    """

    name: ClassVar[str]
    trigger: ClassVar[str | None]
    head: ClassVar[bytes]
    style: ClassVar[Style] = Style()
    stop_after_call: ClassVar[bool] = False
    default_openers: ClassVar[tuple[str, ...] | None] = None
    """The openers kept when ``openers`` is not given (``None``: every declared one)."""
    default_forced: ClassVar[tuple[str, ...] | None] = None
    """The openers a forced call opens with when ``forced`` is not given (``None``: every one in
    use): the mask writes a forced call, so it may open the way the model was trained to
    (docs/RESULTS.md, "BFCL", measures the difference)."""
    answer_prefix: ClassVar[str] = ""
    """Text that opens the answer and is not part of it (gpt-oss's ``<|channel|>final<|message|>``)."""
    call_ends_output: ClassVar[bool] = False
    """The token that ends a call ends the output (gpt-oss's ``<|call|>``)."""
    markers: ClassVar[tuple[str, ...]] = ()
    """Tokens the format writes as single tokens, spelled in its grammar with :meth:`spelled`."""
    reasoning: Reasoning | None = None
    """The reasoning section the model writes before it answers, if any."""
    tail_literal: ClassVar[bytes] = b""
    """Bytes every form-0 tail starts with: a token from a name into them is checked without
    building the tool's automaton (a test keeps them honest)."""
    arguments_in_tail: ClassVar[bool] = False
    """Every tail is fixed bytes around :meth:`arguments`, so budgets bound the shortest call
    among many tools (``decoding.name_bounds``; a test keeps this honest)."""

    def __init__(self, *, openers: Sequence[str] | None = None, forced: Sequence[str] | None = None,
                 reasoning: Reasoning | None | DefaultType = DEFAULT) -> None:
        if not isinstance(reasoning, DefaultType):
            if reasoning is not None and not isinstance(reasoning, Reasoning):
                raise ValueError(f"{self.name}: reasoning must be a Reasoning or None, got {reasoning!r}")
            self.reasoning = reasoning
        declared = [o.name for o in self.declared_openers()]
        self._given = openers is not None
        if openers is None:
            openers = self.default_openers
        if openers is not None:
            unknown = sorted(set(openers) - set(declared))
            if unknown:
                raise ValueError(f"{self.name}: unknown opener(s) {unknown}; declared: {declared}")
        self._keep = None if openers is None else tuple(o for o in declared if o in set(openers))
        self._in_use: tuple[Opener, ...] | None = None  # openers(), made on first use
        self._forced: tuple[str, ...] | None = None
        if forced is not None:
            in_use = [o.name for o in self.openers()]
            unused = sorted(set(forced) - set(in_use))
            if unused or not forced:
                raise ValueError(f"{self.name}: forced opener(s) {unused or '[]'} not in use; in use: {in_use}")
            self._forced = tuple(o for o in in_use if o in set(forced))

    def __getstate__(self) -> dict[str, Any]:
        """Pickled without the openers made on first use (their automata are lambdas)."""
        return {**self.__dict__, "_in_use": None}

    # -- identity ---------------------------------------------------------------------------------

    def options(self) -> dict[str, Any]:
        """Everything that changes the grammar, for the compile key and ``repr``."""
        out: dict[str, Any] = {"openers": self._keep} if self._given and self._keep is not None else {}
        if self._forced is not None:
            out["forced"] = self._forced
        if "reasoning" in self.__dict__ and self.reasoning != type(self).reasoning:
            out["reasoning"] = self.reasoning
        return out

    @property
    def key(self) -> str:
        """Stable text naming the dialect class and its options (part of every compile key)."""
        return f"{type(self).__module__}.{type(self).__qualname__}{json.dumps(self.options(), sort_keys=True, default=str)}"

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.options().items())
        return f"{type(self).__name__}({args})"

    # -- how calls open -----------------------------------------------------------------------------

    def declared_openers(self) -> tuple[Opener, ...]:
        """Every opener the dialect knows (default: the trigger, else the head at the start)."""
        if self.trigger is None:
            head = self.head
            return (Opener("start", 0, text=lambda nfa: nfa.literal(head), anchor=Anchor.START),)
        return (Opener("tag", 0, tag=self.trigger),)

    def openers(self) -> tuple[Opener, ...]:
        """The declared openers the ``openers`` option keeps; made once, as every cursor asks."""
        found = self._in_use
        if found is None:
            declared = self.declared_openers()
            found = declared if self._keep is None else tuple(o for o in declared if o.name in self._keep)
            self._in_use = found  # threads that race here store equal tuples
        return found

    def refusals(self) -> tuple[Refusal, ...]:
        """Text free text may never write (none by default; see :class:`Refusal`)."""
        return ()

    @property
    def markers_in_use(self) -> tuple[str, ...]:
        """The format's markers and its reasoning section's, when it has one."""
        reasoning = self.reasoning
        return self.markers if reasoning is None else tuple(dict.fromkeys(self.markers + reasoning.markers))

    def spelled(self, text: str) -> bytes:
        """``text`` as the grammar spells it (:func:`spelled_text` with the markers in use)."""
        return spelled_text(self.markers_in_use, text)

    def forced_openers(self) -> tuple[Opener, ...]:
        """The openers in use that a call which must come first may open with (``forced``)."""
        in_use = self.openers()
        keep = self._forced if self._forced is not None else self.default_forced
        picked = tuple(o for o in in_use if keep is None or o.name in keep)
        return picked or in_use

    @property
    def named_openers(self) -> bool:
        """Whether an opener in use depends on the tool names (its automaton is per snapshot)."""
        return any(o.named for o in self.openers())

    @property
    def opens_in_text(self) -> bool:
        """Whether a call can begin after free text: some opener in use is not bound to the start."""
        return any(o.anchor is not Anchor.START for o in self.openers())

    @property
    def forms(self) -> int:
        """How many call forms the dialect has."""
        return 1 + max((o.form for o in self.declared_openers()), default=0)

    def head_piece(self, nfa: NFA, form: int) -> Frag:
        """The bytes between a tag opener and the name."""
        return nfa.literal(self.head)

    def call_tail(self, nfa: NFA, tool: Tool, *, form: int, next_call: bool) -> Frag:
        """The bytes after the name up to the end of the call, in ``form``."""
        return self.tail(nfa, tool, next_call=next_call)

    def form_tail_literal(self, form: int) -> bytes:
        """Bytes every tail of ``form`` starts with (see ``tail_literal``)."""
        return self.tail_literal if form == 0 else b""

    def form_style(self, form: int) -> Style:
        """How argument values are spelled in ``form``."""
        return self.style

    @property
    def trigger_bytes(self) -> bytes | None:
        return None if self.trigger is None else self.trigger.encode()

    # -- grammar pieces -----------------------------------------------------------------------------

    @abc.abstractmethod
    def tail(self, nfa: NFA, tool: Tool, *, next_call: bool) -> Frag:
        """The official form's tail: the bytes after the tool name up to the end of the call.

        The first byte must not be a name character. ``next_call`` asks for a branch marked
        ``NEXT_CALL`` where another name starts (formats that list calls in one block).
        """

    def arguments(self, nfa: NFA, tool: Tool, style: Style | None = None) -> Frag:
        """The arguments of ``tool`` in ``style``, no string holding a :meth:`value_stops` text."""
        return SchemaCompiler(nfa, tool.parameters, style or self.style, forbidden=self.value_stops()).value(tool.parameters)

    def value_stops(self) -> tuple[str, ...]:
        """Texts no string value may hold, since a format's readers (vLLM's, :meth:`scan`) cut a
        call there: by default the reasoning delimiters (``benchmarks/formats.py`` measures them)."""
        reasoning = self.reasoning
        return () if reasoning is None else (reasoning.open, reasoning.close)

    def check_tool(self, tool: Tool) -> None:
        """Raise a ``ToolRegistrationError`` if this format cannot write calls to ``tool`` (at compile time)."""

    # -- text -------------------------------------------------------------------------------------

    def parse_calls(self, text: str, tools: Mapping[str, Tool] | None = None) -> list[ToolCall]:
        """The complete calls in text, in any declared form, outside reasoning. ``tools`` lets
        formats that write arguments one by one read a value by its declared type."""
        return self.scan(text, tools).calls

    def scan(self, text: str, tools: Mapping[str, Tool] | None = None) -> CallScan:
        """The calls in ``text`` and the call-like text that did not become one; what is call-like
        in reasoning is counted apart, never as a call or a broken one."""
        answer, reasoning = self.split_reasoning(text)
        found = self.scan_answer(answer, tools)
        if not reasoning:
            return found
        inner = self.scan_answer(reasoning, tools)
        in_reasoning = [self.format_call(call) for call in inner.calls] + inner.broken
        return CallScan(found.calls, found.broken, in_reasoning, reasoning)

    def split_reasoning(self, text: str) -> tuple[str, str]:
        """``(answer, reasoning)``, delimiters left out (an unclosed section runs to the end)."""
        reasoning = self.reasoning
        if reasoning is None:
            return text, ""
        if reasoning.inside_at_start:
            inside, closed, after = text.partition(reasoning.close)
            return (after if closed else ""), inside
        stripped = text.lstrip()
        if not stripped.startswith(reasoning.open):
            return text, ""
        inside, closed, after = stripped[len(reasoning.open):].partition(reasoning.close)
        return (after if closed else ""), inside

    def scan_answer(self, text: str, tools: Mapping[str, Tool] | None = None) -> CallScan:
        """:meth:`scan` without reasoning. Call-like: a trigger beyond the calls parsed, and a
        ``"name"`` object outside every parsed call."""
        calls = self.read_calls(text, tools)
        broken: list[str] = []
        trigger = self.trigger
        if trigger:
            extra = text.count(trigger) - len(calls)
            starts = [m.start() for m in re.finditer(re.escape(trigger), text)]
            broken += [text[s:s + 200] for s in starts[len(starts) - extra:]] if extra > 0 else []
        broken += [text[m.start():m.start() + 200] for m in NAME_OBJECT.finditer(text)
                   if not _inside_call(text, m.start(), calls)]
        return CallScan(calls, broken)

    def read_calls(self, text: str, tools: Mapping[str, Tool] | None = None) -> list[ToolCall]:
        """The calls in text without reasoning (what :meth:`scan_answer` counts from)."""
        raise NotImplementedError(f"{type(self).__name__} must define read_calls or scan_answer")

    @abc.abstractmethod
    def render_result(self, call: ToolCall, result: str) -> str:
        """Text that carries a tool's result back into the context (for text formats)."""

    @abc.abstractmethod
    def format_call(self, call: ToolCall) -> str:
        """The call written as this format writes it (few-shot prompts, history, round trips)."""


def spelled_text(markers: Sequence[str], text: str) -> bytes:
    """``text`` with each of ``markers`` spelled as only its token can write it, the rest as UTF-8.

    Examples:
        >>> spelled_text(["[TOOL_CALLS]", "[ARGS]"], "f[ARGS]{}")
        b'f\\xff\\x02{}'
    """
    if not markers:
        return text.encode("utf-8")
    spelled = spelling(markers)
    found = _marker_pattern(tuple(markers))
    return b"".join(spelled[part] if i % 2 else part.encode("utf-8") for i, part in enumerate(found.split(text)))


@functools.lru_cache(maxsize=64)
def _marker_pattern(markers: tuple[str, ...]) -> re.Pattern[str]:
    """Splits text at the markers (one capturing group: the marker), longest first."""
    return re.compile("(" + "|".join(re.escape(m) for m in sorted(markers, key=len, reverse=True)) + ")")


def _inside_call(text: str, at: int, calls: list[ToolCall]) -> bool:
    """Whether the object at ``at`` decodes to one of ``calls`` (it was parsed as a call)."""
    try:
        data, _ = _DECODER.raw_decode(text, at)
    except json.JSONDecodeError:
        return False
    if not isinstance(data, dict):
        return False
    args = data.get("arguments", data.get("parameters"))
    return any(c.name == data.get("name") and dict(c.arguments) == (args if isinstance(args, dict) else {}) for c in calls)


KEY_BYTES = [(0x2D, 0x2D), (0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A)]
"""Bytes that carry ``{"name`` on into another plain key (``{"names": ...}``)."""


def near_miss(nfa: NFA, *, indent: bool) -> Frag:
    """``{"name`` then a byte that neither closes the key nor carries it on (``{"name}``): no
    call begins so, and free text refuses it so the model writes the call instead of garbage
    (``indent``: after spaces or tabs, for a line anchor)."""
    pieces = [line_indent(nfa)] if indent else []
    pieces += [nfa.literal(b"{"), json_space(nfa), nfa.literal(b'"name'),
               nfa.byte_ranges(_complement([(0x22, 0x22), *KEY_BYTES]))]
    return nfa.seq(*pieces)


def _complement(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The bytes outside ``ranges`` (sorted, disjoint)."""
    out, at = [], 0
    for lo, hi in sorted(ranges):
        if lo > at:
            out.append((at, lo - 1))
        at = hi + 1
    if at <= 255:
        out.append((at, 255))
    return out


def name_head(nfa: NFA) -> Frag:
    """After a committed ``{"name"``: ``: "``, with any JSON whitespace."""
    return nfa.seq(json_ws(nfa), nfa.literal(b":"), json_ws(nfa), nfa.literal(b'"'))


def loose_style(style: Style) -> Style:
    """``style`` with whitespace allowed as models write JSON by hand (pretty printed or not)."""
    return Style(syntax=style.syntax, whitespace=Whitespace.FLEXIBLE, max_whitespace=MAX_WHITESPACE)


class JsonObjectDialect(Dialect):
    """A format whose tag (form 0) is followed by one call in ``json.dumps`` spacing, and whose
    other forms are hand-written JSON objects committed at ``{"name"`` (Hermes, Llama 3, Mistral)."""

    json_forms: ClassVar[Mapping[str, JsonForm]]
    """Per opener name, how :meth:`scan_answer` finds its calls."""

    def tag_head(self) -> bytes:
        """The bytes between the tag and the name."""
        return self.head

    def make_call(self, item: Any) -> ToolCall | None:
        """A decoded JSON value as a call, or ``None`` if it is not one."""
        raise NotImplementedError

    def head_piece(self, nfa: NFA, form: int) -> Frag:
        return nfa.literal(self.tag_head()) if form == 0 else name_head(nfa)

    def form_tail_literal(self, form: int) -> bytes:
        return self.tail_literal if form == 0 else b'"'

    def form_style(self, form: int) -> Style:
        return self.style if form == 0 else loose_style(self.style)

    def loose_arguments(self, nfa: NFA, tool: Tool, form: int, key: Frag) -> list[Frag]:
        """After the name in a hand-written object: ``", <key>: <arguments>``, any whitespace."""
        ws = json_ws
        return [nfa.literal(b'"'), ws(nfa), nfa.literal(b","), ws(nfa), key, ws(nfa), nfa.literal(b":"), ws(nfa),
                self.arguments(nfa, tool, self.form_style(form))]

    def scan_answer(self, text: str, tools: Mapping[str, Tool] | None = None) -> CallScan:
        calls, broken = scan_json_calls(text, [self.json_forms[o.name] for o in self.openers()], self.make_call)
        return CallScan(calls, broken)
