"""Regular expressions (JSON Schema ``pattern`` and ``format``) as byte NFAs inside JSON strings.

``interegular`` parses the regex into a character automaton; each character class on its edges becomes the
JSON-string encodings of those characters (raw UTF-8, or the escape ``json.dumps`` writes for the quote, the
backslash and control characters).

``jsonschema`` checks ``pattern`` with Python's ``re.search``: :func:`anchored` splits a pattern into top-level
alternatives with their own anchors and leading lookaheads (:mod:`.pattern_syntax`). Python's ``\\d \\w \\s`` are
Unicode classes where ``interegular`` reads ASCII: :func:`python_classes` rewrites them so that every string the
automaton writes is one ``re.search`` accepts (``\\w`` and ``\\W`` stay ASCII, a subset), and the *wide* reading
gives a superset instead, exact on ASCII and taking every non-ASCII character such a class might match: two
patterns whose wide readings share no string share none under ``re`` (how ``oneOf`` branches are proven apart).

Every format in :data:`FORMAT_PATTERNS` is a regex whose matches the format checker accepts (the tests check
random strings of each). The documented subsets: a hostname has at most 4 labels of up to 62 characters or 12 of
up to 20 (never over the 253 characters allowed, without a count); a duration has whole numbers; an IPv6 address
embeds an IPv4 one only after six groups, ``::`` or one group and ``::``; a URI's host has no ``[...]`` literal.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping
from typing import Any, TypeVar, cast

import interegular
from interegular.fsm import State, anything_else

from ..caches import BoundedCache
from .nfa import NFA, Frag
from .pattern_syntax import Alternative, UnenforcedConstruct, alternatives, class_end
from .regex_fsm import intersect, pattern_fsm
from .utf8 import complement, normalize_ranges

__all__ = ["CHECKED_FORMATS", "FORMAT_PATTERNS", "CharClassBuilder", "anchored", "fsm_fragment", "fsm_of",
           "length_range", "literal_regex", "python_classes", "regex_fragment", "string_regexes"]

CharClassBuilder = Callable[[NFA, list[tuple[int, int]]], Frag]
"""Builds the piece for one character out of code point ranges (the string syntax decides escapes)."""

_DAY31 = r"(0[1-9]|[12][0-9]|3[01])"
_DAY30 = r"(0[1-9]|[12][0-9]|30)"
_DAY28 = r"(0[1-9]|1[0-9]|2[0-8])"
_YEAR = r"(000[1-9]|00[1-9][0-9]|0[1-9][0-9][0-9]|[1-9][0-9][0-9][0-9])"  # Python's dates start at year 1
_LEAP = r"([0-9][0-9](0[48]|[2468][048]|[13579][26])|(0[48]|[2468][048]|[13579][26])00)"
_DATE = rf"({_YEAR}-((0[13578]|1[02])-{_DAY31}|(0[469]|11)-{_DAY30}|02-{_DAY28})|{_LEAP}-02-29)"
_TIME = r"([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]+)?([Zz]|[+-]([01][0-9]|2[0-3]):[0-5][0-9])"
_UNRESERVED = r"[A-Za-z0-9._~-]"
_PCT = r"%[0-9A-Fa-f]{2}"
_SUB = r"[!$&'()*+,;=]"
_PCHAR = rf"({_UNRESERVED}|{_PCT}|{_SUB}|[:@])"  # RFC 3986 path character
_AUTHORITY = rf"(({_UNRESERVED}|{_PCT}|{_SUB}|:)*@)?({_UNRESERVED}|{_PCT}|{_SUB})*(:[0-9]*)?"
_TAIL = rf"(\?({_PCHAR}|[/?])*)?(#({_PCHAR}|[/?])*)?"
_URI = (rf"[A-Za-z][A-Za-z0-9+.-]*:(//{_AUTHORITY}(/{_PCHAR}*)*|/({_PCHAR}+(/{_PCHAR}*)*)?|{_PCHAR}+(/{_PCHAR}*)*)?"
        + _TAIL)
_RELATIVE = (rf"(//{_AUTHORITY}(/{_PCHAR}*)*|/({_PCHAR}+(/{_PCHAR}*)*)?|({_UNRESERVED}|{_PCT}|{_SUB}|@)+(/{_PCHAR}*)*)?"
             + _TAIL)
_OCTET = r"(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
_IPV4 = rf"{_OCTET}(\.{_OCTET}){{3}}"
_H = r"[0-9A-Fa-f]{1,4}"
_IPV6 = (rf"(({_H}:){{7}}{_H}|({_H}:){{1,7}}:|({_H}:){{1,6}}:{_H}|({_H}:){{1,5}}(:{_H}){{1,2}}|({_H}:){{1,4}}(:{_H}){{1,3}}"
         rf"|({_H}:){{1,3}}(:{_H}){{1,4}}|({_H}:){{1,2}}(:{_H}){{1,5}}|{_H}:(:{_H}){{1,6}}|:((:{_H}){{1,7}}|:)"
         rf"|({_H}:){{6}}{_IPV4}|::({_H}:){{0,5}}{_IPV4}|{_H}::({_H}:){{0,4}}{_IPV4})")


def _label(n: int) -> str:
    return rf"[A-Za-z0-9]([A-Za-z0-9-]{{0,{n - 2}}}[A-Za-z0-9])?"


_HOSTNAME = rf"({_label(62)}(\.{_label(62)}){{0,3}}|{_label(20)}(\.{_label(20)}){{0,11}})\.?"
_DATE_PART = r"([0-9]+Y([0-9]+M)?([0-9]+D)?|[0-9]+M([0-9]+D)?|[0-9]+D)"
_TIME_PART = r"T([0-9]+H([0-9]+M)?([0-9]+S)?|[0-9]+M([0-9]+S)?|[0-9]+S)"
_POINTER = r"(/([^~/]|~[01])*)*"

FORMAT_PATTERNS: dict[str, str] = {
    "date": _DATE,
    "time": _TIME,
    "date-time": f"{_DATE}[Tt]{_TIME}",
    "duration": rf"P({_DATE_PART}({_TIME_PART})?|{_TIME_PART}|[0-9]+W)",
    "email": r"[\s\S]*@[\s\S]*",
    "idn-email": r"[\s\S]*@[\s\S]*",
    "hostname": _HOSTNAME,
    "ipv4": _IPV4,
    "ipv6": _IPV6,
    "uri": _URI,
    "uri-reference": f"({_URI}|{_RELATIVE})",
    "iri": _URI,  # every URI is an IRI
    "iri-reference": f"({_URI}|{_RELATIVE})",
    "uuid": r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}",
    "json-pointer": _POINTER,
    "relative-json-pointer": rf"(0|[1-9][0-9]*)(#|{_POINTER})",
}
"""Every format tooldec writes, as a regex whose matches the format checker accepts."""

CHECKED_FORMATS = frozenset({*FORMAT_PATTERNS, "idn-hostname", "regex", "uri-template"})
"""The formats ``jsonschema``'s 2020-12 checker can check: one outside is dropped; one inside but not in
:data:`FORMAT_PATTERNS` is refused."""

_SUBSET_FORMATS = frozenset({"hostname", "duration", "ipv6", "uri", "uri-reference", "iri", "iri-reference"})
"""The formats whose pattern is a documented subset of the checker's: their wide reading is any string."""


@functools.lru_cache(maxsize=1024)
def anchored(pattern: str, *, wide: bool = False) -> str:
    """The fully anchored equivalent of a (search-semantics) pattern: each top-level alternative with "any text"
    where it has no anchor, its leading lookaheads right at the start (where ``pattern_fsm`` reads them exactly);
    :class:`UnenforcedConstruct` for what the automaton would not enforce exactly.

    Examples:
        >>> print(anchored("^a|b$"))
        (?:(?:a)[\\s\\S]*)|(?:[\\s\\S]*(?:b))
    """
    parts = alternatives(pattern)
    first = parts[0]
    if all((a.at_start, a.at_end) == (first.at_start, first.at_end) and not a.lookaheads for a in parts):
        body = "|".join(python_classes(a.body, wide=wide) for a in parts)
        return _anchored_body(body, first.at_start, first.at_end, wide)
    return "|".join(f"(?:{_anchored_alternative(a, wide)})" for a in parts)


def _anchored_body(body: str, at_start: bool, at_end: bool, wide: bool) -> str:
    """``body`` with "any text" where an anchor is missing (the wide reading takes the newline ``$`` matches before)."""
    anything = r"[\s\S]*"
    end = ("\\n?" if wide else "") if at_end else anything
    return f"{'' if at_start else anything}(?:{body}){end}"


def _anchored_alternative(alt: Alternative, wide: bool) -> str:
    """One alternative, lookaheads first, a negative one read the other way (a superset taken away leaves a subset)."""
    looks = "".join(f"(?{'!' if negated else '='}{python_classes(body, wide=wide != negated)})"
                    for negated, body in alt.lookaheads)
    return looks + _anchored_body(python_classes(alt.body, wide=wide), alt.at_start, alt.at_end, wide)


@functools.cache
def _unicode_class(kind: str) -> str:
    """Python's Unicode ``\\s`` or ``\\d`` as explicit class members (computed once)."""
    test = str.isspace if kind == "s" else str.isdecimal
    top = 0x3001 if kind == "s" else 0x20000  # Unicode has no whitespace or decimal digit above
    points = [cp for cp in range(top) if not 0xD800 <= cp <= 0xDFFF and test(chr(cp))]
    ranges = normalize_ranges((cp, cp) for cp in points)
    return "".join(chr(lo) if lo == hi else f"{chr(lo)}-{chr(hi)}" for lo, hi in ranges)


_ASCII_WORD = "A-Za-z0-9_"
_ASCII_NON_WORD = r"\x00-\x2f\x3a-\x40\x5b-\x5e\x60\x7b-\x7f"


def python_classes(pattern: str, *, wide: bool = False) -> str:
    """``pattern`` with ``\\d \\s \\w`` and their negations made a subset of Python's (Unicode) ``re``:
    ``\\d``, ``\\w`` and ``\\W`` are read as ASCII, ``\\s`` exactly, ``\\S`` and ``\\D`` exactly outside brackets (their
    ASCII members inside). In ``[^...]`` only ``\\d`` and ``\\s`` may be excluded (the rest raise
    :class:`UnenforcedConstruct`). With ``wide``, what is read as a subset is read as a superset: what ``re`` matches
    of ASCII, and every non-ASCII character. ``\\uXXXX`` and ``\\UXXXXXXXX`` become the character (``interegular``
    reads neither).
    """
    out: list[str] = []
    i, in_class, negated = 0, False, False
    while i < len(pattern):
        c = pattern[i]
        if wide and not in_class and c == "[" and _approximated(pattern, i):
            end = class_end(pattern, i)
            out.append(_wide(pattern[i:end]))
            i = end
            continue
        if c == "\\" and i + 1 < len(pattern):
            e = pattern[i + 1]
            i += 2
            if e in "uU":
                digits = 4 if e == "u" else 8
                out.append(_code_point(pattern[i : i + digits]))
                i += digits
            elif wide and not in_class and e in "dwW":
                out.append(_wide("\\" + e))
            elif e in "dswDSW":
                out.append(_rewrite(e, in_class, negated))
            else:
                out.append("\\" + e)
            continue
        if not in_class and c == "[":
            in_class = True
            negated = pattern.startswith("^", i + 1)
            out.append("[^" if negated else "[")
            i += 2 if negated else 1
            if pattern.startswith("]", i):  # a leading ']' is a literal
                out.append("\\]")
                i += 1
            continue
        if in_class and c == "]":
            in_class = False
        out.append(c)
        i += 1
    return "".join(out)


def _approximated(pattern: str, i: int) -> bool:
    """Whether the positive class at ``i`` holds an escape :func:`python_classes` reads as a subset."""
    if pattern.startswith("[^", i):
        return False
    text, j = pattern[i : class_end(pattern, i)], 1
    while j < len(text):
        if text[j] == "\\":
            if text[j + 1 : j + 2] in ("d", "w", "W", "D", "S"):
                return True
            j += 2
        else:
            j += 1
    return False


@functools.lru_cache(maxsize=256)
def _wide(piece: str) -> str:
    """A class or escape as every non-ASCII character and the ASCII ones ``re`` matches with it."""
    compiled = re.compile(piece)
    refused = [chr(c) for c in range(128) if not compiled.fullmatch(chr(c))]
    return "[^" + "".join(f"\\x{ord(c):02x}" for c in refused) + "]" if refused else r"[\s\S]"


def _code_point(digits: str) -> str:
    """The character of a ``\\u`` or ``\\U`` escape as ``interegular`` reads it: ASCII as ``\\xNN``."""
    code = int(digits, 16)
    if 0xD800 <= code <= 0xDFFF:
        raise UnenforcedConstruct("a surrogate code point escape (a JSON string holds no lone surrogate)")
    return f"\\x{code:02x}" if code < 0x80 else chr(code)


def _rewrite(escape: str, in_class: bool, negated: bool) -> str:
    if in_class and negated:
        if escape in ("d", "s"):
            return _unicode_class(escape)
        raise UnenforcedConstruct(f"\\{escape} inside a negated class [^...] (a Unicode class read on ASCII only)")
    inner = {"d": "0-9", "w": _ASCII_WORD, "s": _unicode_class("s"), "W": _ASCII_NON_WORD}.get(escape)
    if inner is not None:
        return inner if in_class else f"[{inner}]"
    if in_class:  # \D or \S inside a positive class: ASCII members only (a subset)
        return {"D": r"\x00-\x2f\x3a-\x7f", "S": r"\x00-\x08\x0e-\x1b\x21-\x7f"}[escape]
    return f"[^{_unicode_class(escape.lower())}]"


@functools.lru_cache(maxsize=256)
def fsm_of(regexes: tuple[str, ...]) -> interegular.FSM:
    """The character automaton of strings fully matching every one of ``regexes`` (cached)."""
    if len(regexes) == 1:
        return _fsm_of_one(regexes[0])
    return intersect(*(_fsm_of_one(regex) for regex in regexes))


# One regex's automaton, cached apart from the tuples it appears in (a key pattern is read alone when registered,
# with the printable-key class when compiled).
_fsm_of_one = functools.lru_cache(maxsize=256)(pattern_fsm)


_T = TypeVar("_T")
_PER_FSM_SIZE = 512
_PER_FSM: BoundedCache[tuple[int, str], tuple[interegular.FSM, Any]] = BoundedCache(_PER_FSM_SIZE, sizer=lambda _: 1)


def _per_fsm(fsm: interegular.FSM, what: str, compute: Callable[[interegular.FSM], _T]) -> _T:
    """``compute(fsm)``, remembered per automaton (bounded), by ``id`` (automata are unhashable): the entry holds
    the automaton so that its id is not reused while it lives."""
    found = _PER_FSM.get_or_make((id(fsm), what), lambda: (fsm, compute(fsm)))
    return cast(_T, found[1])


def length_range(fsm: interegular.FSM) -> tuple[int, int | None] | None:
    """Fewest and most (``None``: unbounded) characters of ``fsm``'s strings; ``None`` if it accepts nothing."""
    return _per_fsm(fsm, "lengths", _length_range)


def _length_range(fsm: interegular.FSM) -> tuple[int, int | None] | None:
    live = _live_states(fsm)
    if fsm.initial not in live:
        return None
    shortest = {fsm.initial: 0}
    frontier = [fsm.initial]
    while frontier:  # breadth first: the first time a state is seen is its shortest distance
        nxt = []
        for state in frontier:
            for target in fsm.map.get(state, {}).values():
                if target in live and target not in shortest:
                    shortest[target] = shortest[state] + 1
                    nxt.append(target)
        frontier = nxt
    fewest = min(shortest[s] for s in fsm.finals if s in shortest)
    # longest path over the live states reachable from the start: Kahn's order, or a loop
    edges = {s: [t for t in fsm.map.get(s, {}).values() if t in live] for s in shortest}
    indegree = dict.fromkeys(shortest, 0)
    for targets in edges.values():
        for t in targets:
            indegree[t] += 1
    order = [s for s, n in indegree.items() if n == 0]
    longest = dict.fromkeys(shortest, 0)
    for state in order:
        for t in edges[state]:
            longest[t] = max(longest[t], longest[state] + 1)
            indegree[t] -= 1
            if indegree[t] == 0:
                order.append(t)
    if len(order) < len(shortest):
        return fewest, None
    return fewest, max(longest[s] for s in fsm.finals if s in longest)


def _live_states(fsm: interegular.FSM) -> set[object]:
    """States from which a final state can be reached."""
    reverse: dict[object, set[object]] = {}
    for state, moves in fsm.map.items():
        for target in moves.values():
            reverse.setdefault(target, set()).add(state)
    live: set[object] = set(fsm.finals)
    stack: list[object] = list(live)
    while stack:
        for source in reverse.get(stack.pop(), ()):
            if source not in live:
                live.add(source)
                stack.append(source)
    return live


def fsm_char_classes(fsm: interegular.FSM) -> dict[object, list[tuple[int, int]]]:
    """The code point ranges of each transition symbol of ``fsm`` (``anything_else`` expanded)."""
    explicit: list[tuple[int, int]] = []
    classes: dict[object, list[tuple[int, int]]] = {}
    for symbol, chars in fsm.alphabet.by_transition.items():
        points = [(ord(c), ord(c)) for c in chars if c is not anything_else]
        explicit += points
        classes[symbol] = points
    for symbol, chars in fsm.alphabet.by_transition.items():
        if anything_else in chars:
            classes[symbol] = classes[symbol] + complement(explicit)
    return {symbol: normalize_ranges(ranges) for symbol, ranges in classes.items()}


def regex_fragment(nfa: NFA, regexes: tuple[str, ...], char_class: CharClassBuilder) -> Frag:
    """A piece accepting exactly the strings (encoded by ``char_class``) fully matching every one of ``regexes``."""
    return fsm_fragment(nfa, fsm_of(regexes), char_class)


def fsm_fragment(nfa: NFA, fsm: interegular.FSM, char_class: CharClassBuilder) -> Frag:
    """A piece accepting exactly ``fsm``'s strings, encoded by ``char_class``: one character piece per (ranges,
    target), not per transition (``[0-9a-z]{1,255}`` minus ``id`` took 7,000 pieces that way)."""
    node = {state: nfa.state() for state in fsm.states}
    end = nfa.state()
    shared: dict[tuple[tuple[tuple[int, int], ...], State], int] = {}
    for state, key in _per_fsm(fsm, "moves", _merged_moves):
        entry = shared.get(key)
        if entry is None:
            a, b = char_class(nfa, list(key[0]))
            nfa.epsilon(b, node[key[1]])
            entry = shared[key] = a
        nfa.epsilon(node[state], entry)
    for state in fsm.finals:
        nfa.epsilon(node[state], end)
    return node[fsm.initial], end


def _merged_moves(fsm: interegular.FSM) -> list[tuple[State, tuple[tuple[tuple[int, int], ...], State]]]:
    """Per live state, its (code point ranges, target) moves, symbols merged per target (once per set of symbols:
    most states of a long repeat move alike)."""
    classes = fsm_char_classes(fsm)
    live = _live_states(fsm)
    merged: dict[tuple[object, ...], tuple[tuple[int, int], ...]] = {}
    out = []
    for state, moves in fsm.map.items():
        if state not in live:
            continue
        by_target: dict[State, list[object]] = {}
        for symbol, target in moves.items():
            if target in live and classes[symbol]:
                by_target.setdefault(target, []).append(symbol)
        for goal, symbols in by_target.items():
            key = tuple(symbols)
            ranges = merged.get(key)
            if ranges is None:
                ranges = merged[key] = tuple(normalize_ranges(r for symbol in symbols for r in classes[symbol]))
            out.append((state, (ranges, goal)))
    return out


def literal_regex(text: str) -> str:
    """A regex matching exactly ``text`` (each character in brackets, so nothing is special)."""
    return "".join(f"[\\{c}]" if c in "\\]^-[" else f"[{c}]" for c in text) if text else "(?:)"


def string_regexes(schema: Mapping[str, Any], *, wide: bool = False) -> tuple[str, ...]:
    """The anchored regexes every string of a core schema fully matches (its ``pattern``, ``format`` and ``allOf``
    ones); ``wide``: supersets of what the checker accepts, for proving two schemas apart."""
    items = [(k, schema[k]) for k in ("pattern", "format") if k in schema]
    items += [next(iter(extra.items())) for extra in schema.get("allOf", [])]

    def regex(keyword: str, value: str) -> str:
        if keyword != "format":
            return anchored(value, wide=wide)
        return r"[\s\S]*" if wide and value in _SUBSET_FORMATS else FORMAT_PATTERNS[value]

    return tuple(dict.fromkeys(regex(k, v) for k, v in items))


