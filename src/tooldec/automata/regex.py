"""Regular expressions (JSON Schema ``pattern`` and ``format``) as byte NFAs inside JSON strings.

The regex is parsed by ``interegular`` into a character automaton; each character class on its
edges becomes the JSON-string encodings of those characters (raw UTF-8, or an escape for the
quote, the backslash and control characters). JSON Schema patterns are unanchored, so a pattern
without ``^``/``$`` may be surrounded by any text.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import interegular
from interegular.fsm import anything_else

from ..tools.schema import split_pattern_anchors
from .nfa import NFA, Frag
from .utf8 import complement, normalize_ranges

__all__ = ["FORMAT_PATTERNS", "CharClassBuilder", "anchored", "length_regex", "regex_fragment"]

CharClassBuilder = Callable[[NFA, list[tuple[int, int]]], Frag]
"""Builds the piece for one character out of code point ranges (the string syntax decides escapes)."""

_DAY31 = r"(0[1-9]|[12]\d|3[01])"
_DAY30 = r"(0[1-9]|[12]\d|30)"
_DAY28 = r"(0[1-9]|1\d|2[0-8])"
_YEAR = r"(000[1-9]|00[1-9]\d|0[1-9]\d\d|[1-9]\d\d\d)"  # Python's dates start at year 1
_LEAP = r"(\d\d(0[48]|[2468][048]|[13579][26])|(0[48]|[2468][048]|[13579][26])00)"
_DATE = rf"({_YEAR}-((0[13578]|1[02])-{_DAY31}|(0[469]|11)-{_DAY30}|02-{_DAY28})|{_LEAP}-02-29)"
_TIME = r"([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d+)?(Z|[+-]([01]\d|2[0-3]):[0-5]\d)"
_UNRESERVED = r"[A-Za-z0-9._~-]"
_PCT = r"%[0-9A-Fa-f]{2}"
_SUB = r"[!$&'()*+,;=]"
_PCHAR = rf"({_UNRESERVED}|{_PCT}|{_SUB}|[:@])"  # RFC 3986 path character
FORMAT_PATTERNS: dict[str, str] = {
    "date": _DATE,
    "time": _TIME,
    "date-time": f"{_DATE}T{_TIME}",
    "uuid": r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}",
    "email": r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+",
    "uri": rf"[a-zA-Z][a-zA-Z0-9+.-]*://({_UNRESERVED}|{_PCT}|{_SUB})*(:[0-9]*)?(/{_PCHAR}*)*(\?({_PCHAR}|[/?])*)?(#({_PCHAR}|[/?])*)?",
}
"""Every format is written as a regex whose matches the format checker accepts (a subset of it)."""


def length_regex(low: int, high: int | None) -> str:
    """Any string of ``low`` to ``high`` characters."""
    return rf"[\s\S]{{{low},{'' if high is None else high}}}"


def anchored(pattern: str) -> str:
    """The fully anchored equivalent of a JSON Schema (search-semantics) pattern."""
    body, at_start, at_end = split_pattern_anchors(pattern)
    anything = r"[\s\S]*"
    return f"{'' if at_start else anything}(?:{body}){'' if at_end else anything}"


@functools.lru_cache(maxsize=256)
def _fsm(regexes: tuple[str, ...]) -> interegular.FSM:
    fsm = interegular.parse_pattern(regexes[0]).to_fsm()
    for regex in regexes[1:]:
        fsm = fsm & interegular.parse_pattern(regex).to_fsm()
    return fsm


def regex_fragment(nfa: NFA, regexes: tuple[str, ...], char_class: CharClassBuilder) -> Frag:
    """A piece accepting exactly the strings (encoded by ``char_class``) that fully match every
    one of ``regexes`` (several constraints on one string are intersected)."""
    fsm = _fsm(regexes)
    explicit: list[tuple[int, int]] = []
    classes: dict[object, list[tuple[int, int]]] = {}
    for symbol, chars in fsm.alphabet.by_transition.items():
        points = [(ord(c), ord(c)) for c in chars if c is not anything_else]
        explicit += points
        classes[symbol] = points
    for symbol, chars in fsm.alphabet.by_transition.items():
        if anything_else in chars:
            classes[symbol] = classes[symbol] + complement(explicit)
    node = {state: nfa.state() for state in fsm.states}
    end = nfa.state()
    for state, moves in fsm.map.items():
        for symbol, target in moves.items():
            ranges = normalize_ranges(classes[symbol])
            if not ranges:
                continue
            a, b = char_class(nfa, ranges)
            nfa.epsilon(node[state], a)
            nfa.epsilon(b, node[target])
    for state in fsm.finals:
        nfa.epsilon(node[state], end)
    return node[fsm.initial], end
