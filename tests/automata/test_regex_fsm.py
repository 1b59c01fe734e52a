"""The linear-time regex automata (``regex_fsm``) accept exactly what ``interegular``'s own
construction and Python's ``re.fullmatch`` accept; JSON Schema patterns (ECMA-262 flavour, as
``jsonschema`` checks them with ``re.search``) are either refused at registration or read exactly."""

from __future__ import annotations

import random
import re

import interegular
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from interegular.fsm import FSM, anything_else

from tooldec.automata.regex import FORMAT_PATTERNS, anchored, fsm_of, python_classes
from tooldec.automata.regex_fsm import intersect, pattern_fsm, subtract, union
from tooldec.errors import InvalidSchemaError, UnsupportedSchemaError
from tooldec.tools.schema import normalize_any_schema

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

FALLBACK = [r"(?i)ab", r"(?s)a.b"]
"""Trees ``regex_fsm`` leaves to ``interegular`` (inline flags)."""


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


def test_product_union() -> None:
    a, b = pattern_fsm("[a-c]+"), pattern_fsm("x|ab")
    assert (union(a, b) ^ (a | b)).empty()


@pytest.mark.parametrize("regex", [r"a(?=b)b", r"[\s\S]*(?:(?!a)b)", r"(?:a(?<=a))", r"(?:(?i)(?!a)b)"])
def test_a_lookaround_that_is_not_leading_is_refused(regex: str) -> None:
    with pytest.raises(interegular.patterns.Unsupported):
        pattern_fsm(regex)


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


# -- JSON Schema patterns against Python's re.search (the judge jsonschema uses) --------------------

_ATOMS = ["a", "b", "c", "@", "-", "\\.", ".", "é", " ", "[a-c]", "[^a]", "[\\w@]", "[^\\s]", "[^\\d]", "\\d", "\\w",
          "\\s", "\\W", "\\D", "\\S", "[\\d-]", "[\\S]", "\\u00e9", "\\u0041", "\\x2d", "[[:alpha:]]", "\\/"]
_SPECIAL = ["^", "$", "\\b", "\\B", "\\1", "\\p{L}", "\\A", "\\Z", "(?i)", "[^\\w]", "(?#c)"]
_OPENERS = ["(", "(?:", "(?=", "(?!", "(?<=", "(?<!", "(?i:", "(?P<n>"]


def _pieces(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.one_of(
        st.tuples(inner, inner).map("".join),
        st.tuples(inner, inner).map("|".join),
        st.tuples(st.sampled_from(_OPENERS), inner).map(lambda t: f"{t[0]}{t[1]})"),
        st.tuples(inner, st.sampled_from(["?", "*", "+", "{1,2}", "{2}", "*?"])).map(lambda t: f"(?:{t[0]}){t[1]}"),
    )


_BODIES = st.recursive(st.sampled_from(_ATOMS * 4 + _SPECIAL), _pieces, max_leaves=6)
_LOOKAHEADS = st.lists(st.tuples(st.sampled_from(["(?=", "(?!"]), st.recursive(st.sampled_from(_ATOMS), _pieces,
                                                                              max_leaves=3)), max_size=2)
SCHEMA_PATTERNS = st.tuples(st.sampled_from(["", "^"]), _LOOKAHEADS, _BODIES, st.sampled_from(["", "$"])).map(
    lambda t: t[0] + "".join(f"{o}{x})" for o, x in t[1]) + t[2] + t[3])
"""ECMA-262-flavoured patterns with the constructs a regex automaton gets wrong: lookarounds
(leading and elsewhere), anchors inside groups and alternatives, ``\\b``, backreferences, Unicode
classes and escapes, inline flags."""

_POOL = "abc@-. é\nA0_1!٣ſK\t"
_APPROXIMATED = re.compile(r"\\[dwWDS]")  # read on ASCII only (a documented subset)


def _strings(fsm: FSM, rng: random.Random) -> list[str]:
    drawn = [_sample(fsm, rng, _POOL) for _ in range(60)]
    drawn += [_mutate(text, rng, _POOL) for text in drawn]
    drawn += ["".join(rng.choice(_POOL) for _ in range(rng.randint(0, 6))) for _ in range(60)]
    return drawn


@pytest.mark.filterwarnings("ignore:Possible nested set:FutureWarning")  # [[:alpha:]] is '[:alph' and ']'
@settings(max_examples=400, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(SCHEMA_PATTERNS)
def test_patterns_are_refused_or_match_re_search(pattern: str) -> None:
    """For every pattern, registration (as ``pattern`` and as a ``patternProperties`` key) raises a
    typed error, or: every string the automaton accepts matches ``re.search``; every sampled
    string ``re.search`` accepts is accepted (ASCII, without a final newline, where the pattern
    has a class read on ASCII: the documented subsets); and the wide reading accepts every one."""
    try:
        compiled = re.compile(pattern)
    except re.error:
        assume(False)
        return
    refused = []
    for schema in ({"type": "string", "pattern": pattern}, {"type": "object", "patternProperties": {pattern: {}}}):
        try:
            normalize_any_schema(schema)
            refused.append(False)
        except UnsupportedSchemaError as error:
            assert error.keyword == next(iter(schema.keys() - {"type"})), error
            refused.append(True)
        except InvalidSchemaError:  # no string matches: the checks below see an empty automaton
            refused.append(False)
    assert refused[0] == refused[1], pattern
    if refused[0]:
        return
    fsm, wide = fsm_of((anchored(pattern),)), fsm_of((anchored(pattern, wide=True),))
    rng = random.Random(pattern)
    approximated = _APPROXIMATED.search(pattern) is not None
    for text in _strings(fsm, rng) + _strings(wide, rng):
        expected = compiled.search(text) is not None
        if fsm.accepts(text):
            assert expected, (pattern, text)
        elif expected and not text.endswith("\n") and not (approximated and not text.isascii()):
            raise AssertionError(("not accepted", pattern, text))
        if expected:
            assert wide.accepts(text), ("wide", pattern, text)


@pytest.mark.parametrize("pattern", [r"^[\S]", r"^[\Sa]", r"^[\D]", r"^[\d\S]", r"^\S", r"^\D"])
def test_negated_escapes_in_a_class_match_every_ascii_character_as_re_does(pattern: str) -> None:
    """A class read as a subset is exact on ASCII (control characters included): the Hypothesis
    oracle above samples such strings only now and then."""
    fsm = fsm_of((anchored(pattern),))
    assert [c for c in range(128) if fsm.accepts(chr(c)) != bool(re.search(pattern, chr(c)))] == []
