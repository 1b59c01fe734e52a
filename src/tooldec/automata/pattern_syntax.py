"""A JSON Schema ``pattern`` split the way Python's ``re.search`` reads it, and the constructs the automaton cannot
carry.

``interegular`` has no anchors, lookarounds, word boundaries or backreferences, so a pattern is split into its
top-level alternatives, each with its own anchors, and the lookaheads right after an alternative's ``^`` (a
difference of automata, exact). Every other construct ``interegular`` would drop or read differently raises
:class:`UnenforcedConstruct` naming it: registration refuses the pattern rather than write strings it rejects.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Alternative", "UnenforcedConstruct", "alternatives", "class_end"]


class UnenforcedConstruct(ValueError):
    """A regex construct the automaton would not enforce exactly; ``construct`` names it."""

    def __init__(self, construct: str) -> None:
        self.construct = construct
        super().__init__(f"{construct} is not enforced exactly")


@dataclass(frozen=True)
class Alternative:
    """One top-level alternative of a pattern: its body without anchors and leading lookaheads."""

    body: str
    at_start: bool
    at_end: bool
    lookaheads: tuple[tuple[bool, str], ...] = ()
    """``(negated, regex)`` checked at the start of the string (only after ``^``)."""


@dataclass(frozen=True)
class _Token:
    kind: str  # char escape class open close bar caret dollar quantifier
    start: int
    end: int
    group: str = ""  # for "open": the kind of group


_GROUPS = (  # longest first: the first prefix that matches names the group
    ("(?P<", "group"), ("(?P=", "a backreference (?P=name)"), ("(?<=", "a lookbehind (?<=...)"),
    ("(?<!", "a lookbehind (?<!...)"), ("(?=", "lookahead"), ("(?!", "lookahead"), ("(?:", "group"),
    ("(?#", "a comment group (?#...)"), ("(?(", "a conditional group (?(...)...)"), ("(?>", "an atomic group (?>...)"),
    ("(?", "an inline flag such as (?i)"), ("(", "group"),
)
_QUANTIFIER = re.compile(r"[*+?]|\{(?:\d+|\d*,\d*)\}")
_ESCAPES = {
    **dict.fromkeys("bB", "a word boundary \\b or \\B"),
    **dict.fromkeys("AZzG", "a string anchor \\A or \\Z"),
    **dict.fromkeys("123456789", "a backreference \\1"),
    **dict.fromkeys("pPNX", "a Unicode property or name escape \\p{...} or \\N{...}"),
}


def class_end(pattern: str, i: int) -> int:
    """The index after the ``]`` closing the class opening at ``i`` (``len(pattern)`` if none; ``[]]`` holds ``]``)."""
    j = i + 1 + pattern.startswith("^", i + 1)
    j += pattern.startswith("]", j)
    while j < len(pattern) and pattern[j] != "]":
        j += 2 if pattern[j] == "\\" else 1
    return min(j + 1, len(pattern))


def _tokens(pattern: str) -> list[_Token]:
    out: list[_Token] = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            out.append(_Token("escape", i, min(i + 2, len(pattern))))
        elif c == "[":
            out.append(_Token("class", i, class_end(pattern, i)))
        elif c == "(":
            prefix, kind = next((p, k) for p, k in _GROUPS if pattern.startswith(p, i))
            if kind == "lookahead":
                kind = "a negative lookahead (?!...)" if prefix == "(?!" else "a lookahead (?=...)"
            out.append(_Token("open", i, i + len(prefix), kind))
        elif c in ")|^$":
            out.append(_Token({")": "close", "|": "bar", "^": "caret", "$": "dollar"}[c], i, i + 1))
        else:
            found = _QUANTIFIER.match(pattern, i)
            if found is None:
                out.append(_Token("char", i, i + 1))
            else:
                end = found.end()
                if pattern.startswith("+", end):
                    raise UnenforcedConstruct("a possessive quantifier such as *+")
                out.append(_Token("quantifier", i, end + (1 if pattern.startswith("?", end) else 0)))
        i = out[-1].end
    return out


def _check_plain(pattern: str, tokens: list[_Token]) -> None:
    """Refuse what no part of a pattern may hold (anchors and lookaheads are placed by the caller)."""
    for token in tokens:
        if token.kind == "escape":
            name = _ESCAPES.get(pattern[token.start + 1 : token.end])
            if name is not None:
                raise UnenforcedConstruct(name)
        elif token.kind == "open" and token.group != "group" and "lookahead" not in token.group:
            raise UnenforcedConstruct(token.group)


def _split(tokens: list[_Token]) -> list[list[_Token]]:
    """The tokens of each top-level alternative."""
    parts: list[list[_Token]] = [[]]
    depth = 0
    for token in tokens:
        if token.kind == "bar" and depth == 0:
            parts.append([])
            continue
        depth += 1 if token.kind == "open" else -1 if token.kind == "close" else 0
        parts[-1].append(token)
    return parts


def _closing(tokens: list[_Token], i: int) -> int:
    """The index of the token closing the group that ``tokens[i]`` opens (``-1``: none)."""
    depth = 0
    for j in range(i, len(tokens)):
        depth += 1 if tokens[j].kind == "open" else -1 if tokens[j].kind == "close" else 0
        if depth == 0:
            return j
    return -1


def _inner_anchors(tokens: list[_Token], where: str) -> None:
    for token in tokens:
        if token.kind in ("caret", "dollar"):
            raise UnenforcedConstruct(f"an anchor ^ or $ {where}")
        if token.kind == "open" and "lookahead" in token.group:
            raise UnenforcedConstruct(f"{token.group} other than right after the ^ of an alternative")


def alternatives(pattern: str) -> tuple[Alternative, ...]:
    """The top-level alternatives of a ``pattern`` (search semantics), each with its anchors and leading lookaheads
    split off; :class:`UnenforcedConstruct` for a lookbehind, a lookahead elsewhere, an inner anchor (``(^a|b)``),
    ``\\b``, ``\\A``, ``\\Z``, a backreference, an inline flag, a comment, conditional or atomic group, a possessive
    quantifier or a Unicode property escape.

    Examples:
        >>> [(a.body, a.at_start, a.at_end) for a in alternatives("^a|b$")]
        [('a', True, False), ('b', False, True)]
        >>> alternatives("^(?!@@)[a-z@]+$")[0].lookaheads
        ((True, '@@'),)
    """
    tokens = _tokens(pattern)
    _check_plain(pattern, tokens)
    out = []
    for part in _split(tokens):
        at_start = bool(part) and part[0].kind == "caret"
        rest = part[1:] if at_start else part
        lookaheads = []
        while at_start and rest and rest[0].kind == "open" and "lookahead" in rest[0].group:
            close = _closing(rest, 0)
            if close < 0 or (close + 1 < len(rest) and rest[close + 1].kind == "quantifier"):
                raise UnenforcedConstruct(f"{rest[0].group} with a quantifier")
            inner = rest[1:close]
            _inner_anchors(inner, "inside a lookahead")
            lookaheads.append((rest[0].group.startswith("a negative"), pattern[rest[0].end : rest[close].start]))
            rest = rest[close + 1 :]
        at_end = bool(rest) and rest[-1].kind == "dollar"
        if at_end:
            rest = rest[:-1]
        _inner_anchors(rest, "inside a group or before the end of an alternative")
        body = pattern[rest[0].start : rest[-1].end] if rest else ""
        out.append(Alternative(body, at_start, at_end, tuple(lookaheads)))
    return tuple(out)
