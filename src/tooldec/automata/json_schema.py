"""JSON Schema (as normalised by ``tools.schema``) to a byte NFA of the values it allows.

Choices that make the language regular and the output predictable, each documented:

* Object properties are written in the order the schema declares them; optional ones may be
  left out. Other keys are allowed only when ``additionalProperties`` is ``true`` or a schema,
  or when an object declares no properties at all; such extra keys are plain ASCII names
  (``[A-Za-z0-9_-]+``), never one of the declared names, written after the declared ones.
* Recursion through ``$ref`` is unrolled ``MAX_REF_DEPTH`` times; ``{}`` (any JSON value)
  nests arrays and objects ``ANY_DEPTH`` levels deep.
* Strings may hold any Unicode character; escapes are ``\\" \\\\ \\/ \\b \\f \\n \\r \\t`` and
  ``\\uXXXX`` outside the surrogate range (so every escape is one character, which keeps
  ``minLength``/``maxLength`` exact).
* Whitespace between tokens follows a :class:`Whitespace` policy (compact by default).
"""

from __future__ import annotations

import enum
import functools
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import jsonschema

from ..tools.schema import MAX_REF_DEPTH
from .nfa import NFA, Frag
from .numbers import integer_fragment, number_fragment
from .regex import FORMAT_PATTERNS, anchored, length_regex, regex_fragment
from .utf8 import normalize_ranges, utf8_sequences

__all__ = ["ANY_DEPTH", "Syntax", "Whitespace", "Style", "SchemaCompiler", "dumps"]

ANY_DEPTH = 3


class Syntax(enum.Enum):
    """How values are spelled."""

    JSON = "json"
    """``true``, ``false``, ``null``, double-quoted strings."""
    PYTHON = "python"
    """``True``, ``False``, ``None``; strings double-quoted with escapes Python reads alike."""


class Whitespace(enum.Enum):
    """Where the model may put whitespace inside a value."""

    COMPACT = "compact"
    """No whitespace: ``{"a":1,"b":[1,2]}``."""
    SPACED = "spaced"
    """One space after ``,`` and ``:``, as ``json.dumps`` writes: ``{"a": 1, "b": [1, 2]}``."""
    FLEXIBLE = "flexible"
    """Up to ``FLEXIBLE_MAX`` spaces, tabs or newlines around every ``{ } [ ] , :``."""


FLEXIBLE_MAX = 2


@dataclass(frozen=True)
class Style:
    syntax: Syntax = Syntax.JSON
    whitespace: Whitespace = Whitespace.COMPACT
    max_whitespace: int = FLEXIBLE_MAX
    """Longest whitespace run with ``Whitespace.FLEXIBLE``."""

    @property
    def item_sep(self) -> bytes:
        return b", " if self.whitespace is Whitespace.SPACED else b","

    @property
    def key_sep(self) -> bytes:
        return b": " if self.whitespace is Whitespace.SPACED else b":"

    def words(self) -> tuple[bytes, bytes, bytes]:
        return (b"True", b"False", b"None") if self.syntax is Syntax.PYTHON else (b"true", b"false", b"null")


def dumps(value: Any, style: Style = Style()) -> str:
    """A value written the way the grammar of ``style`` writes it (used for enum and const)."""
    if style.syntax is Syntax.PYTHON:
        if value is None or isinstance(value, bool):
            return {None: "None", True: "True", False: "False"}[value]
        if isinstance(value, Mapping):
            sep, ksep = style.item_sep.decode(), style.key_sep.decode()
            return "{" + sep.join(f"{json.dumps(k, ensure_ascii=False)}{ksep}{dumps(v, style)}" for k, v in value.items()) + "}"
        if isinstance(value, list):
            return "[" + style.item_sep.decode().join(dumps(v, style) for v in value) + "]"
    seps = (style.item_sep.decode(), style.key_sep.decode())
    return json.dumps(value, ensure_ascii=False, separators=seps)


_TYPE_KEYWORDS = {
    "object": ("properties", "required", "additionalProperties"),
    "array": ("items", "prefixItems", "minItems", "maxItems"),
    "string": ("minLength", "maxLength", "pattern", "format"),
    "number": ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"),
}
_ALL_TYPES = ("string", "number", "integer", "boolean", "null", "array", "object")
_PLAIN = normalize_ranges([(0x20, 0x21), (0x23, 0x5B), (0x5D, 0x10FFFF)])
_SHORT_ESCAPES = {0x22: b'\\"', 0x5C: b"\\\\", 0x08: b"\\b", 0x0C: b"\\f", 0x0A: b"\\n", 0x0D: b"\\r", 0x09: b"\\t"}
_HEX = [(0x30, 0x39), (0x41, 0x46), (0x61, 0x66)]
_KEY_CHARS = [(0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A), (0x2D, 0x2D)]


class SchemaCompiler:
    """Builds NFA pieces for the values of one tool's schema (``root`` resolves local refs)."""

    def __init__(self, nfa: NFA, root: Mapping[str, Any], style: Style = Style()) -> None:
        self.nfa = nfa
        self.root = root
        self.style = style

    # -- entry points -------------------------------------------------------------------------

    def value(self, schema: Any, refs: tuple[str, ...] = ()) -> Frag:
        nfa = self.nfa
        if schema is True or schema == {}:
            return self.any_value(ANY_DEPTH)
        if schema is False:
            return nfa.never()
        if "$ref" in schema:
            ref = schema["$ref"]
            if refs.count(ref) >= MAX_REF_DEPTH:
                return nfa.never()
            rest = {k: v for k, v in schema.items() if k != "$ref"}
            target = self._resolve(ref)
            return self.value(_merge(target, rest) if rest else target, refs + (ref,))
        if "allOf" in schema:
            merged = {k: v for k, v in schema.items() if k != "allOf"}
            for branch in schema["allOf"]:
                while isinstance(branch, Mapping) and "$ref" in branch:  # counted like any reference
                    ref = branch["$ref"]
                    if refs.count(ref) >= MAX_REF_DEPTH:
                        return nfa.never()
                    refs += (ref,)
                    rest = {k: v for k, v in branch.items() if k != "$ref"}
                    target = self._resolve(ref)
                    branch = _merge(target, rest) if rest else target
                merged = _merge(merged, branch)
            return self.value(merged, refs)
        for key in ("anyOf", "oneOf"):
            if key in schema:
                rest = {k: v for k, v in schema.items() if k != key}
                return nfa.alt(*(self.value(_merge(rest, self._deref(b)) if rest else b, refs) for b in schema[key]))
        if "const" in schema or "enum" in schema:
            return self.literals(schema)
        return nfa.alt(*(self.typed(t, schema, refs) for t in _types(schema)))

    def object_members(self, schema: Mapping[str, Any], refs: tuple[str, ...] = (), *, kwargs: bool = False) -> Frag:
        """The members of an object without its braces; ``kwargs`` writes ``name=value`` pairs."""
        nfa = self.nfa
        props: dict[str, Any] = dict(schema.get("properties", {}))
        required = set(schema.get("required", []))
        extra = schema.get("additionalProperties", not props)
        for name in required - props.keys():
            props[name] = extra if isinstance(extra, Mapping) else {}
        sep = self.style.item_sep
        key_sep = b"=" if kwargs else self.style.key_sep
        # node[i][s]: before property i, s = whether a member was already written
        node = [[nfa.state(), nfa.state()] for _ in range(len(props) + 1)]
        for i, (name, sub) in enumerate(props.items()):
            key = name.encode() if kwargs else json.dumps(name, ensure_ascii=False).encode()
            start, end = nfa.seq(nfa.literal(key), self._sep(key_sep), self.value(sub, refs))
            nfa.epsilon(node[i][0], start)
            s2, e2 = self._sep(sep)
            nfa.epsilon(node[i][1], s2)
            nfa.epsilon(e2, start)
            nfa.epsilon(end, node[i + 1][1])
            if name not in required:
                nfa.epsilon(node[i][0], node[i + 1][0])
                nfa.epsilon(node[i][1], node[i + 1][1])
        last = node[-1]
        if extra is not False and not kwargs:
            start, end = nfa.seq(self._extra_key(set(props)), self._sep(key_sep), self.value(extra if isinstance(extra, Mapping) else {}, refs))
            nfa.epsilon(last[0], start)
            s2, e2 = self._sep(sep)
            nfa.epsilon(last[1], s2)
            nfa.epsilon(e2, start)
            nfa.epsilon(end, last[1])
        out = nfa.state()
        nfa.epsilon(last[0], out)
        nfa.epsilon(last[1], out)
        return node[0][0], out

    # -- values by type -----------------------------------------------------------------------

    def typed(self, kind: str, schema: Mapping[str, Any], refs: tuple[str, ...]) -> Frag:
        nfa = self.nfa
        true, false, null = self.style.words()
        if kind == "boolean":
            return nfa.alt(nfa.literal(true), nfa.literal(false))
        if kind == "null":
            return nfa.literal(null)
        if kind in ("integer", "number"):
            low, low_open, high, high_open = _bounds(schema)
            if kind == "number":
                return number_fragment(nfa, low, high, low_open=low_open, high_open=high_open)
            return integer_fragment(
                nfa,
                None if low is None else low + low_open,
                None if high is None else high - high_open,
            )
        if kind == "string":
            return self.string(schema)
        if kind == "array":
            return self.array(schema, refs)
        return nfa.seq(nfa.literal(b"{"), self._ws(), self.object_members(schema, refs), self._ws(), nfa.literal(b"}"))

    def string(self, schema: Mapping[str, Any]) -> Frag:
        nfa = self.nfa
        regexes = []
        if "format" in schema:
            regexes.append(FORMAT_PATTERNS[schema["format"]])
        if "pattern" in schema:
            regexes.append(anchored(schema["pattern"]))
        low, high = int(schema.get("minLength", 0)), schema.get("maxLength")
        if not regexes:  # counted characters: bounds never unroll into states
            return nfa.counted_string(self.any_char, low, high)
        if low:
            regexes.append(length_regex(low, None))
        if high is None:
            body = regex_fragment(nfa, tuple(regexes), self.char_class)
        else:
            body = nfa.counted_text(
                lambda unit: regex_fragment(nfa, tuple(regexes), lambda n, ranges: unit(self.char_class(n, ranges))),
                int(high))
        return nfa.seq(nfa.literal(b'"'), body, nfa.literal(b'"'))

    def array(self, schema: Mapping[str, Any], refs: tuple[str, ...]) -> Frag:
        nfa = self.nfa
        prefix = list(schema.get("prefixItems", []))
        items = schema.get("items", True if prefix else {})
        low, high = int(schema.get("minItems", 0)), schema.get("maxItems")
        sep = lambda: self._sep(self.style.item_sep)  # noqa: E731
        if not prefix:
            body = nfa.counted(lambda: self.value(items, refs), low, high, sep=sep) if high != 0 else nfa.empty()
        else:
            n = len(prefix)
            more_high = None if high is None else max(high - n, 0)
            if items is False or more_high == 0:
                chain = nfa.empty() if low <= n else nfa.never()
            else:
                more = nfa.counted(lambda: self.value(items, refs), max(low - n, 1), more_high, sep=sep)
                chain = nfa.seq(sep(), more)
                if low <= n:
                    chain = nfa.optional(chain)
            for j in range(n - 1, -1, -1):  # chain = what may follow once j prefix items are written
                options = []
                if high is None or j < high:
                    item = self.value(prefix[j], refs)
                    options.append(nfa.seq(item if j == 0 else nfa.seq(sep(), item), chain))
                if j >= low:
                    options.append(nfa.empty())
                chain = nfa.alt(*options) if len(options) > 1 else options[0]
            body = chain
        return nfa.seq(nfa.literal(b"["), self._ws(), body, self._ws(), nfa.literal(b"]"))

    def literals(self, schema: Mapping[str, Any]) -> Frag:
        values = [schema["const"]] if "const" in schema else list(schema["enum"])
        rest = {k: v for k, v in schema.items() if k not in ("const", "enum")}
        if rest:  # keep only the values the rest of the schema accepts
            check = jsonschema.Draft202012Validator({**rest, "$defs": self.root.get("$defs", {}), "definitions": self.root.get("definitions", {})})
            values = [v for v in values if check.is_valid(v)]
        texts = sorted({dumps(v, self.style).encode() for v in values})
        return self.nfa.alt(*(self.nfa.literal(t) for t in texts)) if texts else self.nfa.never()

    def any_value(self, depth: int) -> Frag:
        nfa = self.nfa
        true, false, null = self.style.words()
        options = [
            self.string({}),
            number_fragment(nfa),
            nfa.literal(true),
            nfa.literal(false),
            nfa.literal(null),
        ]
        if depth > 0:
            options += [self._any_array(depth - 1), self._any_object(depth - 1)]
        return nfa.alt(*options)

    # -- characters ---------------------------------------------------------------------------

    def any_char(self) -> Frag:
        """One string character: raw UTF-8 or an escape (stamped from a piece built once)."""
        return self.nfa.stamp(_any_char_template(self.style.syntax))

    def _build_any_char(self) -> Frag:
        nfa = self.nfa
        raw = nfa.sequences(seq for lo, hi in _PLAIN for seq in utf8_sequences(lo, hi))
        shorts = [b'\\"', b"\\\\", b"\\b", b"\\f", b"\\n", b"\\r", b"\\t"] + ([] if self.style.syntax is Syntax.PYTHON else [b"\\/"])
        short = nfa.alt(*(nfa.literal(s) for s in shorts))
        # \uXXXX outside D800-DFFF
        non_surrogate = nfa.alt(
            nfa.seq(nfa.byte_ranges([(0x30, 0x39), (0x41, 0x43), (0x61, 0x63)]), self._hex(3)),
            nfa.seq(nfa.byte_ranges([(0x44, 0x44), (0x64, 0x64)]), nfa.byte_ranges([(0x30, 0x37)]), self._hex(2)),
            nfa.seq(nfa.byte_ranges([(0x45, 0x46), (0x65, 0x66)]), self._hex(3)),
        )
        unicode = nfa.seq(nfa.literal(b"\\u"), non_surrogate)
        return nfa.alt(raw, short, unicode)

    def char_class(self, nfa: NFA, ranges: list[tuple[int, int]]) -> Frag:
        """The JSON-string encodings of one character out of ``ranges`` (for regex patterns)."""
        plain: list[tuple[int, int]] = []
        escaped: list[bytes] = []
        for lo, hi in ranges:
            for cp in range(lo, min(hi, 0x5C) + 1):
                if cp < 0x20 or cp in (0x22, 0x5C):
                    escaped.append(_SHORT_ESCAPES.get(cp, f"\\u{cp:04x}".encode()))
            plain += [(max(a, lo), min(b, hi)) for a, b in _PLAIN if max(a, lo) <= min(b, hi)]
        pieces = [nfa.literal(e) for e in escaped]
        if plain:
            pieces.append(nfa.sequences(seq for lo, hi in normalize_ranges(plain) for seq in utf8_sequences(lo, hi)))
        return nfa.alt(*pieces)

    # -- helpers ------------------------------------------------------------------------------

    def _any_array(self, depth: int) -> Frag:
        nfa = self.nfa
        sep = lambda: self._sep(self.style.item_sep)  # noqa: E731
        body = nfa.counted(lambda: self.any_value(depth), 0, None, sep=sep)
        return nfa.seq(nfa.literal(b"["), self._ws(), body, self._ws(), nfa.literal(b"]"))

    def _any_object(self, depth: int) -> Frag:
        nfa = self.nfa
        sep = lambda: self._sep(self.style.item_sep)  # noqa: E731
        member = lambda: nfa.seq(self.string({}), self._sep(self.style.key_sep), self.any_value(depth))  # noqa: E731
        body = nfa.counted(member, 0, None, sep=sep)
        return nfa.seq(nfa.literal(b"{"), self._ws(), body, self._ws(), nfa.literal(b"}"))

    def _extra_key(self, declared: set[str]) -> Frag:
        """A quoted ASCII name that is none of ``declared`` (so no declared key is written twice)."""
        nfa = self.nfa
        start, free, end = nfa.state(), nfa.state(), nfa.state()
        for lo, hi in _KEY_CHARS:
            nfa.edge(free, lo, hi, free)
        nfa.edge(free, 0x22, 0x22, end)
        trie: dict[bytes, int] = {b"": nfa.state()}
        names = {n.encode() for n in declared if n.isascii()}
        prefixes = {n[:i] for n in names for i in range(1, len(n) + 1)}
        for p in sorted(prefixes, key=len):
            trie[p] = nfa.state()
        for p, st in trie.items():
            for lo, hi in _KEY_CHARS:
                for b in range(lo, hi + 1):
                    nxt = p + bytes([b])
                    nfa.edge(st, b, b, trie[nxt] if nxt in trie else free)
            if p and p not in names:
                nfa.edge(st, 0x22, 0x22, end)
        nfa.edge(start, 0x22, 0x22, trie[b""])
        return start, end

    def _hex(self, n: int) -> Frag:
        return self.nfa.repeat(lambda: self.nfa.byte_ranges(_HEX), n, n)

    def _ws(self) -> Frag:
        if self.style.whitespace is not Whitespace.FLEXIBLE:
            return self.nfa.empty()
        return self.nfa.counted(lambda: self.nfa.byte_ranges([(0x20, 0x20), (0x0A, 0x0A), (0x09, 0x09), (0x0D, 0x0D)]),
                                0, self.style.max_whitespace)

    def _sep(self, sep: bytes) -> Frag:
        return self.nfa.seq(self._ws(), self.nfa.literal(sep), self._ws())

    def _resolve(self, ref: str) -> Any:
        node: Any = self.root
        for part in ref.lstrip("#").split("/")[1:]:
            node = node[part.replace("~1", "/").replace("~0", "~")]
        return node

    def _deref(self, schema: Any) -> Any:
        if isinstance(schema, Mapping) and set(schema) == {"$ref"}:
            return self._resolve(schema["$ref"])
        return schema


@functools.lru_cache(maxsize=None)
def _any_char_template(syntax: Syntax) -> tuple[NFA, Frag]:
    nfa = NFA()
    return nfa, SchemaCompiler(nfa, {}, Style(syntax=syntax))._build_any_char()


def _types(schema: Mapping[str, Any]) -> list[str]:
    declared = schema.get("type")
    if isinstance(declared, str):
        return [declared]
    if isinstance(declared, list):
        return list(declared)
    inferred = [t for t, words in _TYPE_KEYWORDS.items() if any(w in schema for w in words)]
    if "number" in inferred:
        inferred.append("integer")
    return inferred or list(_ALL_TYPES)


def _bounds(schema: Mapping[str, Any]) -> tuple[int | None, bool, int | None, bool]:
    """(low, low is exclusive, high, high is exclusive) from the four bound keywords."""
    low, low_open, high, high_open = None, False, None, False
    if "minimum" in schema:
        low = int(schema["minimum"])
    if "exclusiveMinimum" in schema and (low is None or schema["exclusiveMinimum"] >= low):
        low, low_open = int(schema["exclusiveMinimum"]), True
    if "maximum" in schema:
        high = int(schema["maximum"])
    if "exclusiveMaximum" in schema and (high is None or schema["exclusiveMaximum"] <= high):
        high, high_open = int(schema["exclusiveMaximum"]), True
    return low, low_open, high, high_open


def _merge(a: Any, b: Any) -> Any:
    """Both schemas at once, for the cases tool schemas use (object branches, added keywords)."""
    if not isinstance(a, Mapping) or not isinstance(b, Mapping):
        return b if isinstance(a, Mapping) else a
    out = dict(a)
    for key, value in b.items():
        if key == "properties" and key in out:
            props = dict(out[key])
            for name, sub in value.items():
                props[name] = _merge(props[name], sub) if name in props else sub
            out[key] = props
        elif key == "required" and key in out:
            out[key] = list(dict.fromkeys([*out[key], *value]))
        elif key == "type" and key in out:
            left = {out[key]} if isinstance(out[key], str) else set(out[key])
            right = {value} if isinstance(value, str) else set(value)
            if "number" in left:
                left.add("integer")
            if "number" in right:
                right.add("integer")
            both = sorted(left & right)
            out[key] = both[0] if len(both) == 1 else both
        else:
            out[key] = value
    return out
