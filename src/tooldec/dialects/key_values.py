"""Arguments written one by one between tags (Qwen3-Coder's ``<parameter=city>\\nParis\\n</parameter>\\n``).

A string is its raw text, anything else its JSON. The readers (vLLM's parsers, and
:meth:`KeyValueArguments.read`) take a value by its property's declared type, stop it at the
first closing tag and read ``null`` in any case as null, so a property has one type (or one and
null), no value holds a stop text, and no raw string reads as null.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..automata.json_schema import SchemaCompiler, Style, Whitespace, holding
from ..automata.nfa import NFA, Frag
from ..automata.regex import fsm_fragment, fsm_of, literal_regex, string_regexes
from ..automata.regex_fsm import intersect, subtract
from ..automata.utf8 import utf8_sequences
from ..errors import UnsupportedSchemaError
from ..tools import Tool
from .base import require_plain_properties

__all__ = ["KeyValueArguments", "value_kind"]

_NULLISH = r"[nN][uU][lL][lL]"
"""What every reader takes for null, whatever the property's type."""


def _kinds_of(schema: Any) -> set[str]:
    """The JSON types a core schema allows (``any`` for all of them)."""
    if schema is True or schema == {}:
        return {"any"}
    if schema is False:
        return set()
    if "anyOf" in schema:
        return set().union(*(_kinds_of(branch) for branch in schema["anyOf"]))
    if "enum" in schema:
        return {_kind_of_value(v) for v in schema["enum"]}
    declared = schema.get("type")
    if declared is None:
        return {"any"}
    return {declared} if isinstance(declared, str) else set(declared)


def _kind_of_value(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object" if isinstance(value, dict) else "any"


def value_kind(schema: Any) -> str | None:
    """How a property's values are written: ``string`` (raw text), ``integer``, ``number``,
    ``boolean``, ``null``, ``object`` or ``array`` (JSON); ``None`` when it has several types."""
    kinds = _kinds_of(schema) - {"null"}
    if not kinds:
        return "null"
    if "any" in kinds:
        return "string"  # any value: a raw string is one
    if kinds == {"integer", "number"}:
        return "number"
    return next(iter(kinds)) if len(kinds) == 1 else None


class _RawStrings(SchemaCompiler):
    """A property's values with strings as raw text (no quotes, no escapes)."""

    def string(self, schema: Mapping[str, Any], excluded: list[str] | None = None) -> Frag:
        nfa = self.nfa
        regexes = string_regexes(schema)
        low, high = int(schema.get("minLength", 0)), schema.get("maxLength")
        if not regexes and not excluded and not low and high is None:  # most strings: one piece, built once
            return nfa.stamp(_free_raw_string(self.forbidden))
        fsm = fsm_of(regexes or (r"[\s\S]*",))
        drop = [holding(self.forbidden), fsm_of((_NULLISH,))]
        if excluded:
            drop.append(fsm_of(("|".join(f"(?:{literal_regex(t)})" for t in sorted(set(excluded))),)))
        fsm = subtract(fsm, *drop)
        if low:
            fsm = intersect(fsm, fsm_of((rf"[\s\S]{{{low},}}",)))
        if high is None:
            return fsm_fragment(nfa, fsm, _raw_char)
        return nfa.counted_text(lambda unit: fsm_fragment(nfa, fsm, lambda n, ranges: unit(_raw_char(n, ranges))), int(high))

    def literals(self, schema: Mapping[str, Any]) -> Frag:
        texts = sorted({_raw(v, self.style).encode() for v in schema["enum"]})
        return self.nfa.alt(*(self.nfa.literal(t) for t in texts)) if texts else self.nfa.never()


@functools.lru_cache(maxsize=32)
def _free_raw_string(forbidden: tuple[str, ...]) -> tuple[NFA, Frag]:
    """Any raw string without ``forbidden`` that does not read as null (shared, never modified)."""
    nfa = NFA()
    fsm = subtract(fsm_of((r"[\s\S]*",)), holding(forbidden), fsm_of((_NULLISH,)))
    return nfa, fsm_fragment(nfa, fsm, _raw_char)


def _raw_char(nfa: NFA, ranges: list[tuple[int, int]]) -> Frag:
    """One character out of ``ranges`` as its UTF-8 bytes."""
    start, end = nfa.state(), nfa.state()
    for lo, hi in ranges:
        for seq in utf8_sequences(lo, hi):
            piece = nfa.seq(*(nfa.byte_ranges([r]) for r in seq))
            nfa.epsilon(start, piece[0])
            nfa.epsilon(piece[1], end)
    return start, end


def _raw(value: Any, style: Style) -> str:
    """A value as these formats write it: a string raw, anything else as JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(style.item_sep.decode(), style.key_sep.decode()))


@dataclass(frozen=True)
class KeyValueArguments:
    """Each argument as ``key_open`` KEY ``key_close`` VALUE ``value_close``.

    Attributes:
        string_key_close: Between a key and a string value, where the format marks strings.
        stops: Texts a reader ends a value at, which no value may hold (default: the first line
            of ``value_close``).
    """

    key_open: str
    key_close: str
    value_close: str
    string_key_close: str | None = None
    stops: tuple[str, ...] = ()
    style: Style = field(default_factory=lambda: Style(whitespace=Whitespace.SPACED))

    @property
    def stop_texts(self) -> tuple[str, ...]:
        return self.stops or (self.value_close.strip("\n"),)

    # -- registration ----------------------------------------------------------------------------

    def check(self, tool: Tool, format_name: str) -> None:
        """Refuse what these formats cannot write or read back (``UnsupportedSchemaError``)."""
        require_plain_properties(tool, f"{format_name} writes arguments one by one")
        params = tool.parameters
        props = params.get("properties", {})
        source = tool.source_parameters.get("properties", {}) if isinstance(tool.source_parameters, Mapping) else {}
        if int(params.get("minProperties", 0)) > len(props):
            raise UnsupportedSchemaError(f"{format_name} writes only the declared properties", tool=tool.name,
                                         pointer="", keyword="minProperties")
        for name, sub in props.items():
            pointer = f"/properties/{name}"
            if any(c in name for c in "<>\"\n") or any(stop in name for stop in self.stop_texts):
                raise UnsupportedSchemaError(f"{format_name} cannot write the key {name!r}", tool=tool.name,
                                             pointer=pointer, keyword="properties")
            kind = value_kind(sub)
            if kind is None:
                raise UnsupportedSchemaError(
                    f"{format_name} reads a value by its property's type, and this property has several",
                    tool=tool.name, pointer=pointer, keyword="type")
            declared = source.get(name, {}).get("type") if isinstance(source.get(name), Mapping) else None
            reads = {_reader_kind(t) for t in ([declared] if not isinstance(declared, list) else declared)}
            if kind != "null" and not reads & _READ_AS[kind]:
                raise UnsupportedSchemaError(
                    f"{format_name} reads a value by its property's declared type, and {declared!r} does not "
                    f"read a {kind} back (declare the type)", tool=tool.name, pointer=pointer, keyword="type")

    # -- grammar ---------------------------------------------------------------------------------

    def fragment(self, nfa: NFA, tool: Tool, spelled: Callable[[str], bytes], stops: tuple[str, ...] = ()) -> Frag:
        """The arguments of ``tool`` in declared order; no value holds a stop text or ``stops``."""
        params = tool.parameters
        required = set(params.get("required", []))
        forbidden = tuple(dict.fromkeys((*self.stop_texts, *stops)))
        json_values = SchemaCompiler(nfa, params, self.style, forbidden=forbidden)
        raw_values = _RawStrings(nfa, params, self.style, forbidden=forbidden)
        pieces = []
        for name, sub in params.get("properties", {}).items():
            if sub is False:
                continue
            kind = value_kind(sub)
            close = self.string_key_close if kind == "string" and self.string_key_close is not None else self.key_close
            value = raw_values.value(sub) if kind == "string" else json_values.value(sub)
            member = nfa.seq(nfa.literal(spelled(self.key_open) + name.encode() + spelled(close)), value,
                             nfa.literal(spelled(self.value_close)))
            pieces.append(member if name in required else nfa.optional(member))
        return nfa.seq(*pieces) if pieces else nfa.empty()

    # -- text ------------------------------------------------------------------------------------

    def read(self, body: str, tool: Tool | None) -> dict[str, Any] | None:
        """The arguments in ``body``, by the declared types of ``tool``; ``None`` if it holds none."""
        closes = [re.escape(self.key_close)]
        if self.string_key_close is not None:
            closes.insert(0, re.escape(self.string_key_close))
        member = re.compile(re.escape(self.key_open) + r"(.*?)(" + "|".join(closes) + r")(.*?)" + re.escape(self.value_close),
                            re.DOTALL)
        props = tool.parameters.get("properties", {}) if tool is not None else {}
        out: dict[str, Any] = {}
        at = 0
        for match in member.finditer(body):
            if body[at:match.start()].strip():
                return None
            name, value = match.group(1), match.group(3)
            kind = value_kind(props[name]) if name in props else None
            out[name] = _read_value(value, kind)
            at = match.end()
        return out if not body[at:].strip() else None

    def write(self, arguments: Mapping[str, Any]) -> str:
        """The arguments as the format writes them."""
        parts = []
        for name, value in arguments.items():
            close = self.string_key_close if isinstance(value, str) and self.string_key_close is not None else self.key_close
            parts.append(f"{self.key_open}{name}{close}{_raw(value, self.style)}{self.value_close}")
        return "".join(parts)


_READ_AS = {"string": {"string"}, "integer": {"integer", "number"}, "number": {"number"}, "boolean": {"boolean"},
            "object": {"json"}, "array": {"json"}}
"""The declared types whose reading gives back a value written as each kind."""


def _reader_kind(declared: Any) -> str:
    """How vLLM's readers take a value of a property declared ``declared`` (``other``: a guess)."""
    if declared is None:
        return "string"
    name = str(declared).strip().lower()
    if name in ("string", "str", "text", "varchar", "char", "enum"):
        return "string"
    if name.startswith(("int", "uint", "long", "short", "unsigned")):
        return "integer"
    if name.startswith(("num", "float", "double")):
        return "number"
    if name in ("boolean", "bool", "binary"):
        return "boolean"
    if name in ("object", "array", "arr") or name.startswith(("dict", "list")):
        return "json"
    return "other"


def _read_value(text: str, kind: str | None) -> Any:
    """A raw value by its property's kind (``None``: unknown, JSON if it reads as JSON)."""
    if text.lower() == "null":
        return None
    if kind == "string":
        return text
    if kind == "boolean" and text.lower() in ("true", "false"):
        return text.lower() == "true"
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text
