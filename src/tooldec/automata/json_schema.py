"""Normalized JSON Schema (``tools.schema``'s core form) to a byte NFA of the values it allows.

``tools.schema`` has already combined the keywords, unrolled references and refused what cannot be written; this
compiler maps each core keyword to NFA pieces and never raises. Choices that keep the language regular:

* Properties are written in declared order, optional ones may be left out. Other keys come after them, only with
  ``additionalProperties`` (not ``false``), ``patternProperties``, or no declared properties: ASCII names
  (``[A-Za-z0-9_-]+``) or, for a pattern, printable ASCII, never a declared name or another pattern's match. An
  extra key may repeat (JSON keeps the last), so ``minProperties`` counts at most one extra key.
* ``{}`` (any JSON value) nests arrays and objects ``ANY_DEPTH`` levels deep.
* Strings hold any Unicode character; escapes are ``\\" \\\\ \\/ \\b \\f \\n \\r \\t``, ``\\uXXXX`` outside the
  surrogates, and surrogate pairs (one character, as ``json.dumps`` writes an emoji), never a lone surrogate. Inside
  a ``pattern`` or ``format`` each character has one spelling, ``json.dumps(..., ensure_ascii=False)``'s.
* Numbers: see :mod:`.numbers`. Whitespace follows a :class:`Whitespace` policy (compact by default).
* Counts (lengths, items, extra members) all become NFA pieces in :meth:`SchemaCompiler.counted`.
"""

from __future__ import annotations

import enum
import functools
import json
import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import interegular

from .costs import Costs
from .gcpause import collector_paused
from .json_members import Members
from .nfa import NFA, Frag
from .numbers import integer_fragment, number_fragment
from .regex import anchored, fsm_fragment, fsm_of, literal_regex, string_regexes
from .regex_fsm import intersect, subtract
from .utf8 import normalize_ranges, utf8_sequences

__all__ = ["ANY_DEPTH", "FLEXIBLE_MAX", "SchemaCompiler", "Style", "Syntax", "Whitespace", "dumps", "holding",
           "prepare_values", "string_template"]

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
    """Up to ``Style.max_whitespace`` spaces, tabs or newlines around every ``{ } [ ] , :``."""


FLEXIBLE_MAX = 2


@dataclass(frozen=True)
class Style:
    syntax: Syntax = Syntax.JSON
    whitespace: Whitespace = Whitespace.COMPACT
    max_whitespace: int = FLEXIBLE_MAX
    """Longest whitespace run with ``Whitespace.FLEXIBLE`` (counted, not unrolled)."""

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
    return _encoder(style.item_sep, style.key_sep).encode(value)


@functools.lru_cache(maxsize=8)  # one per style's separators
def _encoder(item_sep: bytes, key_sep: bytes) -> json.JSONEncoder:
    """``json.dumps(..., ensure_ascii=False, separators=...)``'s encoder, made once (not per value)."""
    return json.JSONEncoder(ensure_ascii=False, separators=(item_sep.decode(), key_sep.decode()))


_ALL_KINDS = ("null", "boolean", "object", "array", "number", "string")
_PLAIN = normalize_ranges([(0x20, 0x21), (0x23, 0x5B), (0x5D, 0x10FFFF)])
_SHORT_ESCAPES = {0x22: b'\\"', 0x5C: b"\\\\", 0x08: b"\\b", 0x0C: b"\\f", 0x0A: b"\\n", 0x0D: b"\\r", 0x09: b"\\t"}
_HEX = [(0x30, 0x39), (0x41, 0x46), (0x61, 0x66)]
_KEY_CHARS = [(0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A), (0x2D, 0x2D)]
_PRINTABLE_KEYS = r"[\x20-\x7e]+"


def _kinds(schema: Mapping[str, Any]) -> list[str]:
    t = schema.get("type")
    if t is None:
        return list(_ALL_KINDS)
    return [t] if isinstance(t, str) else list(t)


class SchemaCompiler:
    """Builds NFA pieces, into ``nfa``, for the values of one tool's normalized schema ``root``."""

    def __init__(self, nfa: NFA, root: Mapping[str, Any], style: Style = Style(), *,
                 forbidden: tuple[str, ...] = ()) -> None:
        self.nfa = nfa
        self.root = root
        self.style = style
        self.forbidden = forbidden
        """Texts no string may hold (a call format whose reader stops at them: XML parameters)."""

    # -- entry points -------------------------------------------------------------------------

    def value(self, schema: Any) -> Frag:
        """The values of a core schema, built with the garbage collector paused (:mod:`.gcpause`)."""
        with collector_paused():
            return self._value(schema)

    def _value(self, schema: Any) -> Frag:
        nfa = self.nfa
        if schema is True:
            return self.any_value(ANY_DEPTH)
        if schema is False:
            return nfa.never()
        if "anyOf" in schema:
            return nfa.alt(*(self._value(b) for b in schema["anyOf"]))
        if "enum" in schema:
            return self.literals(schema)
        excluded = schema.get("not", {}).get("enum", [])
        return nfa.alt(*(self.typed(kind, schema, excluded) for kind in _kinds(schema)))

    def object_members(self, schema: Mapping[str, Any], *, kwargs: bool = False) -> Frag:
        """The members of an object without its braces; ``kwargs`` writes ``name=value`` pairs."""
        return Members(self, schema, kwargs).build()

    def counted(self, make: Callable[[], Frag], low: int, high: int | None,
                sep: Callable[[], Frag] | None = None) -> Frag:
        """``low``..``high`` repetitions of ``make()``, joined by ``sep()`` pieces if given: the one place a count
        becomes NFA pieces, carried by the cursor (``NFA.counted``), never unrolled into states."""
        if high == 0:
            return self.nfa.empty()
        return self.nfa.counted(make, low, high, sep=sep)

    # -- values by type -----------------------------------------------------------------------

    def typed(self, kind: str, schema: Mapping[str, Any], excluded: list[Any]) -> Frag:
        nfa = self.nfa
        true, false, null = self.style.words()
        if kind == "boolean":
            return nfa.alt(*(nfa.literal(word) for word, v in ((true, True), (false, False))
                             if not any(x is v for x in excluded)))
        if kind == "null":
            return nfa.never() if any(x is None for x in excluded) else nfa.literal(null)
        if kind == "integer":
            return self.integers(schema, excluded)
        if kind == "number":
            return self.numbers(schema, excluded)
        if kind == "string":
            return self.string(schema, [x for x in excluded if isinstance(x, str)])
        if kind == "array":
            return self.array(schema)
        return nfa.seq(nfa.literal(b"{"), self._ws(), self.object_members(schema), self._ws(), nfa.literal(b"}"))

    def integers(self, schema: Mapping[str, Any], excluded: list[Any]) -> Frag:
        low, high = schema.get("minimum"), schema.get("maximum")
        multiple = schema.get("multipleOf", 1)
        holes = sorted({int(x) for x in excluded if _finite(x) and (isinstance(x, int) or x.is_integer())
                        and (low is None or x >= low) and (high is None or x <= high)})
        pieces, start = [], low
        for hole in [*holes, None]:
            end = high if hole is None else hole - 1
            if start is None or end is None or start <= end:
                pieces.append(integer_fragment(self.nfa, start, end, multiple_of=multiple))
            start = None if hole is None else hole + 1
        return self.nfa.alt(*pieces)

    def numbers(self, schema: Mapping[str, Any], excluded: list[Any]) -> Frag:
        low, low_open = (schema["exclusiveMinimum"], True) if "exclusiveMinimum" in schema else (schema.get("minimum"), False)
        high, high_open = (schema["exclusiveMaximum"], True) if "exclusiveMaximum" in schema else (schema.get("maximum"), False)
        holes = sorted({Fraction(x) for x in excluded if _finite(x)})
        holes = [h for h in holes if (low is None or h > low or (h == low and not low_open))
                 and (high is None or h < high or (h == high and not high_open))]
        pieces = []
        for hole in [*holes, None]:  # the intervals between excluded values, each open at a hole
            end, end_open = (high, high_open) if hole is None else (_number(hole), True)
            pieces.append(number_fragment(self.nfa, low, end, low_open=low_open, high_open=end_open))
            if hole is not None:
                low, low_open = _number(hole), True
        return self.nfa.alt(*pieces)

    def string(self, schema: Mapping[str, Any], excluded: list[str] | None = None) -> Frag:
        nfa = self.nfa
        regexes = string_regexes(schema)
        low, high = int(schema.get("minLength", 0)), schema.get("maxLength")
        if not regexes and not excluded and not self.forbidden:  # counted characters, the quotes included
            return nfa.counted_string(self.any_char, low, high)
        if not regexes and not excluded and not low and high is None and type(self) is SchemaCompiler:
            return nfa.stamp(string_template(self.style, self.forbidden))  # one piece per set of texts
        fsm = fsm_of(regexes or (r"[\s\S]*",))
        if excluded:
            fsm = subtract(fsm, _literals_fsm(tuple(sorted(set(excluded)))))
        if self.forbidden:
            fsm = subtract(fsm, holding(self.forbidden))
        body = self._bounded_regex(fsm, low, high) if low or high is not None else fsm_fragment(nfa, fsm, self.char_class)
        return nfa.seq(nfa.literal(b'"'), body, nfa.literal(b'"'))

    def _bounded_regex(self, fsm: interegular.FSM, low: int, high: int | None) -> Frag:
        """Strings of ``fsm`` with ``low`` (intersected in) to ``high`` (counted by the cursor) characters."""
        nfa = self.nfa
        if low:
            fsm = intersect(fsm, fsm_of((rf"[\s\S]{{{low},}}",)))
        if high is None:
            return fsm_fragment(nfa, fsm, self.char_class)
        return nfa.counted_text(
            lambda unit: fsm_fragment(nfa, fsm, lambda n, ranges: unit(self.char_class(n, ranges))), int(high))

    def array(self, schema: Mapping[str, Any]) -> Frag:
        nfa = self.nfa
        prefix = list(schema.get("prefixItems", []))
        items = schema.get("items", True)
        low, high = int(schema.get("minItems", 0)), schema.get("maxItems")

        def sep() -> Frag:
            return self.separator(self.style.item_sep)

        if not prefix:
            body = self.counted(lambda: self.value(items), sep=sep, low=low, high=high) if items is not False \
                else (nfa.empty() if low == 0 else nfa.never())
        else:
            n = len(prefix)
            more_high = None if high is None else max(high - n, 0)
            if items is False or more_high == 0:
                chain = nfa.empty() if low <= n else nfa.never()
            else:
                more = self.counted(lambda: self.value(items), max(low - n, 1), more_high, sep=sep)
                chain = nfa.seq(sep(), more)
                if low <= n:
                    chain = nfa.optional(chain)
            for j in range(n - 1, -1, -1):  # chain = what may follow once j prefix items are written
                options = []
                if high is None or j < high:
                    item = self.value(prefix[j])
                    options.append(nfa.seq(item if j == 0 else nfa.seq(sep(), item), chain))
                if j >= low:
                    options.append(nfa.empty())
                chain = nfa.alt(*options) if len(options) > 1 else options[0]
            body = chain
        return nfa.seq(nfa.literal(b"["), self._ws(), body, self._ws(), nfa.literal(b"]"))

    def literals(self, schema: Mapping[str, Any]) -> Frag:
        """The enum's values, as the style writes them (the normalizer kept only valid ones)."""
        texts = sorted({dumps(v, self.style).encode() for v in schema["enum"]})
        return self.nfa.alt(*(self.nfa.literal(t) for t in texts)) if texts else self.nfa.never()

    def any_value(self, depth: int) -> Frag:
        """Any JSON value nested up to ``depth`` levels (stamped from a piece built once)."""
        return self.nfa.stamp(_any_value_template(self.style, depth, self.forbidden))

    def _build_any_value(self, depth: int) -> Frag:
        nfa = self.nfa
        true, false, null = self.style.words()
        options = [self.string({}), number_fragment(nfa), nfa.literal(true), nfa.literal(false), nfa.literal(null)]
        if depth > 0:
            options += [self._any_array(depth - 1), self._any_object(depth - 1)]
        return nfa.alt(*options)

    # -- characters ---------------------------------------------------------------------------

    def any_char(self) -> Frag:
        """One string character: raw UTF-8 or an escape (stamped from a piece built once)."""
        return self.nfa.stamp(_any_char_template(self.style.syntax))

    def _build_any_char(self) -> Frag:
        """One character, with continuation bytes and hex digits shared (about 20 states)."""
        nfa = self.nfa
        start, end = nfa.state(), nfa.state()
        raw = _utf8_fragment(nfa, list(_PLAIN))
        nfa.epsilon(start, raw[0])
        nfa.epsilon(raw[1], end)
        self._escape_into(start, end)
        return start, end

    def escaped_char(self) -> Frag:
        """One character written as an escape (``\\n``, ``\\u00e3``, a surrogate pair)."""
        start, end = self.nfa.state(), self.nfa.state()
        self._escape_into(start, end)
        return start, end

    def _escape_into(self, start: int, end: int) -> None:
        """The escapes of one character, from ``start`` to ``end``."""
        nfa = self.nfa
        escape = nfa.state()
        nfa.edge(start, 0x5C, 0x5C, escape)
        for short in b'"\\bfnrt' + (b"" if self.style.syntax is Syntax.PYTHON else b"/"):
            nfa.edge(escape, short, short, end)
        hex1, hex2, hex3 = nfa.state(), nfa.state(), nfa.state()  # hex digits still to read: 1, 2, 3
        for lo, hi in _HEX:
            nfa.edge(hex3, lo, hi, hex2)
            nfa.edge(hex2, lo, hi, hex1)
            nfa.edge(hex1, lo, hi, end)
        u, d = nfa.state(), nfa.state()
        nfa.edge(escape, 0x75, 0x75, u)
        for lo, hi in [(0x30, 0x39), (0x41, 0x43), (0x61, 0x63), (0x45, 0x46), (0x65, 0x66)]:
            nfa.edge(u, lo, hi, hex3)  # \uXXXX outside D800-DFFF
        for lo, hi in [(0x44, 0x44), (0x64, 0x64)]:
            nfa.edge(u, lo, hi, d)
        nfa.edge(d, 0x30, 0x37, hex2)
        if self.style.syntax is Syntax.JSON:  # a high surrogate escape, then a low one: one character
            high1, high2 = nfa.state(), nfa.state()
            for lo, hi in [(0x38, 0x39), (0x41, 0x42), (0x61, 0x62)]:
                nfa.edge(d, lo, hi, high2)
            for lo, hi in _HEX:
                nfa.edge(high2, lo, hi, high1)
            low = nfa.literal(b"\\u")
            for lo, hi in _HEX:
                nfa.edge(high1, lo, hi, low[0])
            low_d = nfa.state()
            nfa.edge(low[1], 0x44, 0x44, low_d)
            nfa.edge(low[1], 0x64, 0x64, low_d)
            for lo, hi in [(0x43, 0x46), (0x63, 0x66)]:
                nfa.edge(low_d, lo, hi, hex2)

    def char_class(self, nfa: NFA, ranges: list[tuple[int, int]]) -> Frag:
        """The JSON-string encodings of one character out of ``ranges`` (for regex patterns)."""
        escaped, plain = _class_plan(tuple(ranges))
        if not escaped:
            return _utf8_fragment(nfa, plain)
        start, end = nfa.state(), nfa.state()
        trie: dict[bytes, int] = {b"": start}
        for text in escaped:  # escapes share their prefixes (``\\u00`` once, not 27 times)
            for i in range(1, len(text)):
                if text[:i] not in trie:
                    trie[text[:i]] = nfa.state()
                    nfa.edge(trie[text[: i - 1]], text[i - 1], text[i - 1], trie[text[:i]])
            nfa.edge(trie[text[:-1]], text[-1], text[-1], end)
        if plain:
            a, b = _utf8_fragment(nfa, plain)
            nfa.epsilon(start, a)
            nfa.epsilon(b, end)
        return start, end

    # -- helpers ------------------------------------------------------------------------------

    def _any_array(self, depth: int) -> Frag:
        nfa = self.nfa
        body = self.counted(lambda: self.any_value(depth), 0, None, sep=lambda: self.separator(self.style.item_sep))
        return nfa.seq(nfa.literal(b"["), self._ws(), body, self._ws(), nfa.literal(b"]"))

    def _any_object(self, depth: int) -> Frag:
        nfa = self.nfa

        def member() -> Frag:
            return nfa.seq(self.string({}), self.separator(self.style.key_sep), self.any_value(depth))

        body = self.counted(member, 0, None, sep=lambda: self.separator(self.style.item_sep))
        return nfa.seq(nfa.literal(b"{"), self._ws(), body, self._ws(), nfa.literal(b"}"))

    def extra_key(self, declared: set[str]) -> Frag:
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

    def pattern_key(self, include: str | None, exclude: tuple[str, ...], declared: tuple[str, ...]) -> Frag:
        """A quoted key of ``include`` (``None``: ASCII names), not of ``exclude`` and not ``declared``."""
        fsm = _key_fsm(include, exclude, declared)
        if self.forbidden:
            fsm = subtract(fsm, holding(self.forbidden))
        return self.nfa.seq(self.nfa.literal(b'"'), fsm_fragment(self.nfa, fsm, self.char_class), self.nfa.literal(b'"'))

    def _ws(self) -> Frag:
        if self.style.whitespace is not Whitespace.FLEXIBLE:
            return self.nfa.empty()
        return self.nfa.blank_run(self.style.max_whitespace)

    def separator(self, sep: bytes) -> Frag:
        return self.nfa.seq(self._ws(), self.nfa.literal(sep), self._ws())


@functools.lru_cache(maxsize=4096)
def _class_plan(ranges: tuple[tuple[int, int], ...]) -> tuple[list[bytes], tuple[tuple[int, int], ...]]:
    """The escapes and the raw code point ranges that write one character out of ``ranges``."""
    plain: list[tuple[int, int]] = []
    escaped: list[bytes] = []
    for lo, hi in ranges:
        for cp in range(lo, min(hi, 0x5C) + 1):
            if cp < 0x20 or cp in (0x22, 0x5C):
                escaped.append(_SHORT_ESCAPES.get(cp, f"\\u{cp:04x}".encode()))
        plain += [(max(a, lo), min(b, hi)) for a, b in _PLAIN if max(a, lo) <= min(b, hi)]
    return escaped, tuple(normalize_ranges(plain))


@functools.lru_cache(maxsize=4096)
def _utf8_plan(ranges: tuple[tuple[int, int], ...]) -> list[list[tuple[int, int]]]:
    return [seq for lo, hi in ranges for seq in utf8_sequences(lo, hi)]


def _utf8_fragment(nfa: NFA, ranges: Iterable[tuple[int, int]]) -> Frag:
    """The UTF-8 encodings of one code point of ``ranges``, shared endings (all of Unicode in 10 states, not 40)."""
    start, end = nfa.state(), nfa.state()
    suffix: dict[tuple[tuple[int, int], ...], int] = {(): end}

    def entry(rest: tuple[tuple[int, int], ...]) -> int:
        if rest not in suffix:
            state = nfa.state()
            nfa.edge(state, rest[0][0], rest[0][1], entry(rest[1:]))
            suffix[rest] = state
        return suffix[rest]

    for seq in _utf8_plan(tuple(ranges)):
        first, rest = seq[0], tuple(seq[1:])
        nfa.edge(start, first[0], first[1], entry(rest))
    return start, end


def _finite(value: Any) -> bool:
    """A number a grammar can write (an excluded ``inf`` or ``nan`` is never written anyway)."""
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and math.isfinite(value))


def _number(value: Fraction) -> int | float:
    return value.numerator if value.denominator == 1 else float(value)


@functools.lru_cache(maxsize=256)
def _literals_fsm(texts: tuple[str, ...]) -> interegular.FSM:
    return fsm_of(("|".join(f"(?:{literal_regex(t)})" for t in texts),))


@functools.lru_cache(maxsize=256)
def _key_fsm(include: str | None, exclude: tuple[str, ...], declared: tuple[str, ...]) -> interegular.FSM:
    """Printable ASCII keys of ``include`` (``None``: ``[A-Za-z0-9_-]+``), outside ``exclude`` and ``declared``."""
    base = (r"[A-Za-z0-9_\-]+",) if include is None else (anchored(include), _PRINTABLE_KEYS)
    fsm = fsm_of(base)
    others = [fsm_of((anchored(pattern),)) for pattern in exclude]
    names = tuple(n for n in declared if n.isascii() and n.isprintable() and n)
    if names:
        others.append(_literals_fsm(names))
    return subtract(fsm, *others) if others else fsm


@functools.lru_cache(maxsize=16)
def prepare_values(style: Style, window: int) -> None:
    """Build now the any-value pieces every free-form value of ``style`` stamps, and their distance tables: 5-15
    ms a compiler pays when created rather than in the first request with a free-form value. Thread-safe."""
    nfa = NFA()
    piece = SchemaCompiler(nfa, {}, style).value(True)
    Costs(nfa, piece[1], window)  # copies the pieces' tables, computing them the first time


@functools.lru_cache(maxsize=64)
def _any_value_template(style: Style, depth: int, forbidden: tuple[str, ...] = ()) -> tuple[NFA, Frag]:
    """Any value of ``style`` up to ``depth`` levels, built once (1,500 states at depth 3). Never modified."""
    nfa = NFA()
    return nfa, SchemaCompiler(nfa, {}, style, forbidden=forbidden)._build_any_value(depth)


@functools.lru_cache(maxsize=64)
def _forbidding_string(texts: tuple[str, ...]) -> interegular.FSM:
    """The strings that hold none of ``texts``."""
    return subtract(fsm_of((r"[\s\S]*",)), holding(texts))


@functools.lru_cache(maxsize=64)
def string_template(style: Style, forbidden: tuple[str, ...]) -> tuple[NFA, Frag]:
    """A quoted string of ``style`` holding none of ``forbidden``, built once (tens of milliseconds, and every free
    string of a call format with stop texts is one)."""
    nfa = NFA()
    nfa.quoted_string = True
    compiler = SchemaCompiler(nfa, {}, style, forbidden=forbidden)

    def plain() -> Frag:
        return fsm_fragment(nfa, _forbidding_string(forbidden), compiler.char_class)

    if any("\\" in text for text in forbidden):  # an escape could write part of one: canonical escapes only
        body = plain()
    else:  # no escape is part of a stop text: runs that hold none, joined by any escape (``\\u00e3``)
        body = nfa.seq(plain(), nfa.star(nfa.seq(compiler.escaped_char(), plain())))
    return nfa, nfa.seq(nfa.literal(b'"'), body, nfa.literal(b'"'))


@functools.lru_cache(maxsize=64)
def holding(texts: tuple[str, ...]) -> interegular.FSM:
    """The strings that hold any of ``texts``."""
    return fsm_of(("[\\s\\S]*(?:" + "|".join(literal_regex(t) for t in texts) + ")[\\s\\S]*",))


@functools.cache
def _any_char_template(syntax: Syntax) -> tuple[NFA, Frag]:
    nfa = NFA()
    return nfa, SchemaCompiler(nfa, {}, Style(syntax=syntax))._build_any_char()
