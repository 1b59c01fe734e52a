"""The linear-time regex automata (``regex_fsm``) accept exactly what ``interegular``'s own
construction and Python's ``re.fullmatch`` accept."""

from __future__ import annotations

import random
import re

import interegular
import pytest
from interegular.fsm import FSM, anything_else

from tooldec.automata.regex import FORMAT_PATTERNS, anchored, python_classes
from tooldec.automata.regex_fsm import intersect, pattern_fsm, subtract

_BCP47 = (  # the language-tag key pattern of JSONSchemaBench Github_trivial/o76654 (shortened)
    r"^(((([A-Za-z]{2,3}(-([A-Za-z]{3}(-[A-Za-z]{3}){0,2}))?)|[A-Za-z]{4}|[A-Za-z]{5,8})(-([A-Za-z]{4}))?"
    r"(-([A-Za-z]{2}|[0-9]{3}))?(-([A-Za-z0-9]{5,8}|[0-9][A-Za-z0-9]{3}))*(-([0-9A-WY-Za-wy-z](-[A-Za-z0-9]{2,8})+))*"
    r"(-(x(-[A-Za-z0-9]{1,8})+))?)|(x(-[A-Za-z0-9]{1,8})+)|((en-GB-oed|i-ami|i-bnn|sgn-BE-FR)|(art-lojban|zh-min-nan)))$"
)

PATTERNS = [
    *FORMAT_PATTERNS.values(),
    anchored(_BCP47),
    anchored(r"^[a-z]+-\d{2}$"),
    anchored(r"\d"),
    anchored(r"^\+?[\d\s()-]{9,20}"),
    anchored(r"^[^\s@]+@[^\s@]+\.[^\s@]+$"),
    anchored(r"^(\w+\.)*\w+$"),
    r"a.b|c*",
    r"(ab|c){2,4}x*",
    r"(a|)(b?){0,3}c{2}",
    r"(?:x|y)+z{0,0}",
    r"()",
    r"[^a-c]{1,3}",
    r"[\]\-^]+",
    r"é+|ü{2}|日本",
    r"\.\*\\",
]
"""Regexes read the way tooldec compiles them (formats, anchored JSON Schema patterns) and
corner cases of the tree: empty options, nested bounded and unbounded repeats, negated classes."""

FALLBACK = [r"(?i)ab", r"a(?=b)b", r"(?s)a.b"]
"""Trees ``regex_fsm`` leaves to ``interegular`` (flags, lookarounds)."""


def _reference(regex: str) -> FSM:
    return interegular.parse_pattern(regex).to_fsm()


@pytest.mark.parametrize("regex", PATTERNS + FALLBACK)
def test_same_language_as_interegular(regex: str) -> None:
    ours, theirs = pattern_fsm(regex), _reference(regex)
    assert (ours ^ theirs).empty()


def _sample(fsm: FSM, rng: random.Random, others: str) -> str:
    """A string along a random walk of ``fsm`` (mostly accepted; stops early at times)."""
    chars = {key: [c if c is not anything_else else rng.choice(others) for c in symbols]
             for key, symbols in fsm.alphabet.by_transition.items()}
    state, out = fsm.initial, []
    for _ in range(rng.randint(0, 60)):
        if state in fsm.finals and rng.random() < 0.15:
            break
        moves = fsm.map.get(state, {})
        if not moves:
            break
        key = rng.choice(sorted(moves))
        out.append(rng.choice(chars[key]))
        state = moves[key]
    return "".join(out)


def _mutate(text: str, rng: random.Random, pool: str) -> str:
    i = rng.randint(0, len(text))
    kind = rng.randrange(3)
    if kind == 0:
        return text[:i] + rng.choice(pool) + text[i:]
    if kind == 1:
        return text[:i] + text[i + 1:]
    return text[:i] + rng.choice(pool) + text[i + 1:]


@pytest.mark.parametrize("regex", PATTERNS)
def test_accepts_what_re_fullmatch_accepts(regex: str) -> None:
    """On strings drawn from the automaton and on small edits of them (which are often
    rejected), acceptance equals ``re.fullmatch``. Where a pattern has a ``\\d``-like class
    (ASCII for ``interegular``, Unicode for ``re``), only ASCII strings count (``re.ASCII``)."""
    fsm = pattern_fsm(regex)
    shorthand = re.search(r"\\[dswDSW]", regex.replace(r"[\s\S]", "")) is not None  # [\s\S]: all, for both
    compiled = re.compile(regex, re.ASCII if shorthand else 0)
    rng = random.Random(regex)
    pool = "aZ09-._:/@ \t\n%~#?é日\u00a0\u2029"
    accepted = rejected = 0
    for _ in range(400):
        text = _sample(fsm, rng, pool)
        if rng.random() < 0.5:
            text = _mutate(text, rng, pool)
        if shorthand and not text.isascii():
            continue
        expected = compiled.fullmatch(text) is not None
        assert fsm.accepts(text) is expected, (regex, text)
        accepted += expected
        rejected += not expected
    assert accepted and rejected  # both sides of the language were tried


def test_product_operations_match_interegular() -> None:
    names = pattern_fsm("[a-z0-9_]{1,40}")
    declared = pattern_fsm("id|name|x")
    digits = pattern_fsm("[0-9]+")
    tag = pattern_fsm(python_classes(anchored(_BCP47)))
    assert (subtract(names, declared, digits) ^ (names - declared - digits)).empty()
    assert (intersect(names, digits) ^ (names & digits)).empty()
    assert (intersect(tag, pattern_fsm(r"[\x20-\x7e]+")) ^ (tag & _reference(r"[\x20-\x7e]+"))).empty()
    assert subtract(digits, digits).empty()
    assert intersect(digits, pattern_fsm("[a-z]+")).empty()


def test_language_tags() -> None:
    """The BCP 47 fixture reads as language tags (a typo in it would test little)."""
    fsm = pattern_fsm(anchored(_BCP47))
    assert all(fsm.accepts(tag) for tag in ("en-GB-oed", "de-CH-1996", "zh-min-nan", "x-private"))
    assert not any(fsm.accepts(tag) for tag in ("en--GB", "e", "de-CH-19", ""))


def test_per_automaton_memo_is_right_and_bounded() -> None:
    """``length_range`` and the fragment plan are remembered per automaton object, at most
    ``_PER_FSM_SIZE`` of them (each entry holds its automaton, so no id is reused meanwhile)."""
    from tooldec.automata import regex

    fsm = pattern_fsm("a{3,5}|b*c")
    assert regex.length_range(fsm) == (1, None)
    assert regex.length_range(fsm) == (1, None)
    assert regex.length_range(pattern_fsm("a{3,5}")) == (3, 5)
    for n in range(regex._PER_FSM_SIZE + 50):
        assert regex.length_range(pattern_fsm(f"{n:04d}")) == (4, 4)
    assert len(regex._PER_FSM) <= regex._PER_FSM_SIZE
