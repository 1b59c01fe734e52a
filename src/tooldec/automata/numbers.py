"""Decimal integers and numbers within bounds, as byte NFAs growing with the bounds' digits, not the range's width.

``minimum: 1, maximum: 12`` becomes the language ``[1-9]|1[0-2]``: a numeral's integer length is guessed at the
start (a branch per length, sharing one chain of free digits), and while its digits equal a bound's the automaton
follows that bound (one state per digit), free once they differ. An int64 bound costs about 19 x 3 states.

JSON readers parse ``12`` as an exact integer but ``12.5`` as a binary float, so a bounded number is the union of
integer numerals within the exact bounds and numerals with a fraction whose *float* lies within them (each bound
moved to the shortest decimal of the nearest float inside: rounding never carries a numeral across). Bounded
numbers have no exponent; unbounded ones up to two digits after ``e``/``e+`` and three after ``e-``, so that no
exponent alone overflows to infinity. ``multiple_of`` (integers only) tracks the remainder of the digits read.
"""

from __future__ import annotations

import functools
import itertools
import math
import sys
from collections.abc import Callable
from decimal import Decimal, localcontext
from fractions import Fraction
from typing import Any

from .nfa import NFA, Frag

__all__ = ["EXPONENT_DIGITS", "NEGATIVE_EXPONENT_DIGITS", "integer_fragment", "number_fragment"]

EXPONENT_DIGITS = 2
"""At most this many digits after ``e`` or ``e+``: ``1e99`` is fine, ``1e999`` is infinity."""
NEGATIVE_EXPONENT_DIGITS = 3
"""At most this many digits after ``e-`` (``1e-300``; smaller values read as 0.0, still finite)."""

_DIGIT = [(0x30, 0x39)]
_NONZERO = [(0x31, 0x39)]
_MAX_FLOAT = Fraction(sys.float_info.max)

Number = int | float
_Key = tuple[Any, ...]
"""A state of the digit automaton: kind, then what the kind needs (position, tight flags, remainder)."""


def _parts(value: Fraction) -> tuple[str, str]:
    """Integer digits and fraction digits (trailing zeros dropped) of an exact non-negative value."""
    if value.denominator == 1:
        return str(value.numerator), ""
    with localcontext() as ctx:
        ctx.prec = 2000
        text = format(Decimal(value.numerator) / Decimal(value.denominator), "f")
    whole, _, frac = text.partition(".")
    return whole, frac.rstrip("0")


class _Magnitude:
    """Numerals ``0|[1-9][0-9]*`` (then ``.[0-9]+``, required, when ``fraction``) of values ``lo <(=) v <(=) hi``
    (``lo >= 0``, ``hi`` ``None``: unbounded); states interned by key, one per digit position of a bound."""

    def __init__(self, nfa: NFA, lo: Fraction, lo_open: bool, hi: Fraction | None, hi_open: bool,
                 *, fraction: bool, modulus: int = 1) -> None:
        self.nfa, self.fraction, self.m = nfa, fraction, modulus
        self.lo_int, self.lo_frac = _parts(lo)
        self.hi_int, self.hi_frac = _parts(hi) if hi is not None else ("", "")
        self.lo_open, self.hi_open, self.bounded = lo_open, hi_open, hi is not None
        self.states: dict[_Key, int] = {}
        self.todo: list[_Key] = []
        self.end = nfa.state()

    def build(self) -> Frag:
        nfa = self.nfa
        start = nfa.state()
        lo_len = len(self.lo_int)
        hi_len = len(self.hi_int) if self.bounded else lo_len
        for length in range(lo_len, hi_len + 1):
            tl, th = length == lo_len, self.bounded and length == hi_len
            self.digit_edges(start, ("I", length, 0, tl, th, 0))
        if not self.bounded:  # every numeral longer than the lower bound
            self.edges(start, 1, 9, lambda d: ("U", lo_len, d % self.m))
        while self.todo:
            self.expand(self.todo.pop())
        return start, self.end

    def state(self, key: _Key) -> int:
        if key[0] == "F" and key[1] == 0:
            key = ("E", False, False, key[2])
        found = self.states.get(key)
        if found is None:
            found = self.states[key] = self.nfa.state()
            self.todo.append(key)
        return found

    def edges(self, src: int, lo: int, hi: int, target: Callable[[int], _Key]) -> None:
        """Digits ``lo..hi`` from ``src``; ``target(d)`` is the key after digit ``d``."""
        if lo > hi:
            return
        if self.m == 1:  # every digit of the range leads to the same key
            self.nfa.edge(src, 0x30 + lo, 0x30 + hi, self.state(target(lo)))
            return
        for d in range(lo, hi + 1):
            self.nfa.edge(src, 0x30 + d, 0x30 + d, self.state(target(d)))

    def digit_edges(self, src: int, key: _Key) -> None:
        """Edges for the digit at position ``i`` of an integer part of ``length`` digits."""
        _, length, i, tl, th, r = key
        a = int(self.lo_int[i]) if tl else 0
        b = int(self.hi_int[i]) if th else 9
        if i == 0 and length > 1:
            a = max(a, 1)

        def after(d: int) -> _Key:
            ntl = bool(tl) and d == int(self.lo_int[i])
            nth = bool(th) and d == int(self.hi_int[i])
            nr = (r * 10 + d) % self.m
            if i + 1 == length:
                return ("E", ntl, nth, nr)
            if ntl or nth:
                return ("I", length, i + 1, ntl, nth, nr)
            return ("F", length - i - 1, nr)

        marks = {a, b + 1}
        if tl:
            marks |= {int(self.lo_int[i]), int(self.lo_int[i]) + 1}
        if th:
            marks |= {int(self.hi_int[i]), int(self.hi_int[i]) + 1}
        cuts = sorted(c for c in marks if a <= c <= b + 1)
        for x, y in itertools.pairwise(cuts):
            self.edges(src, x, y - 1, after)

    def expand(self, key: _Key) -> None:
        src = self.states[key]
        kind = key[0]
        if kind == "I":
            self.digit_edges(src, key)
        elif kind == "F":
            _, k, r = key
            self.edges(src, 0, 9, lambda d: ("F", k - 1, (r * 10 + d) % self.m))
        elif kind == "U":
            _, k, r = key
            self.edges(src, 0, 9, lambda d: ("U", max(k - 1, 0), (r * 10 + d) % self.m))
            if k == 0:
                self.nfa.epsilon(src, self.state(("E", False, False, r)))
        elif kind == "E":
            _, tl, th, r = key
            if self.fraction:
                dot = self.nfa.state()
                self.nfa.edge(src, 0x2E, 0x2E, dot)
                self.fraction_edges(dot, 0, bool(tl), bool(th))
            elif r == 0 and self.ends_ok(0, bool(tl), bool(th)):
                self.nfa.epsilon(src, self.end)
        elif kind == "D":
            _, j, tl, th = key
            self.fraction_edges(src, j, bool(tl), bool(th))
            if self.ends_ok(j, bool(tl), bool(th)):
                self.nfa.epsilon(src, self.end)
        elif kind == "DF":
            self.nfa.edge(src, 0x30, 0x39, src)
            self.nfa.epsilon(src, self.end)

    def ends_ok(self, j: int, tl: bool, th: bool) -> bool:
        """Whether a numeral may end here, ``j`` fraction digits read, equal to the flagged bounds' prefixes."""
        if tl and (len(self.lo_frac) > j or self.lo_open):
            return False  # below the lower bound, or equal to an exclusive one
        if th and len(self.hi_frac) <= j and self.hi_open:
            return False  # equal to an exclusive upper bound
        return True

    def fraction_edges(self, src: int, j: int, tl: bool, th: bool) -> None:
        a = int(self.lo_frac[j]) if tl and j < len(self.lo_frac) else 0
        b = (int(self.hi_frac[j]) if j < len(self.hi_frac) else 0) if th else 9
        cap = max(len(self.lo_frac), len(self.hi_frac), 1)  # past both bounds' digits, states repeat

        def key(d: int) -> _Key:
            ntl = tl and d == a
            nth = th and d == b
            if not ntl and not nth:
                return ("DF",)
            return ("D", min(j + 1, cap), ntl, nth)

        cuts = sorted(c for c in {a, a + 1, b, b + 1} if a <= c <= b + 1)
        for x, y in itertools.pairwise(cuts):
            self.nfa.edge(src, 0x30 + x, 0x30 + y - 1, self.state(key(x)))


def _magnitude(nfa: NFA, lo: Fraction, lo_open: bool, hi: Fraction | None, hi_open: bool,
               *, fraction: bool, modulus: int = 1) -> Frag:
    if hi is not None and (lo > hi or (lo == hi and (lo_open or hi_open))):
        return nfa.never()
    return _Magnitude(nfa, lo, lo_open, hi, hi_open, fraction=fraction, modulus=modulus).build()


def integer_fragment(nfa: NFA, low: int | None = None, high: int | None = None, *, multiple_of: int = 1) -> Frag:
    """Integers in ``[low, high]`` (``None``: unbounded) divisible by ``multiple_of``, as JSON writes them. Stamped
    from a piece built once per bounds: a schema often has dozens of numbers alike (GeoJSON coordinates)."""
    return nfa.stamp(_template("integer", low, high, multiple_of))


@functools.lru_cache(maxsize=256)
def _template(kind: str, *args: Any) -> tuple[NFA, Frag]:
    """The piece of :func:`integer_fragment` or :func:`number_fragment`, in an NFA of its own (shared, unchanging)."""
    nfa = NFA()
    return nfa, (_build_integer if kind == "integer" else _build_number)(nfa, *args)


def _build_integer(nfa: NFA, low: int | None, high: int | None, multiple_of: int) -> Frag:
    parts = []
    if high is None or high >= 0:
        lo = Fraction(max(low, 0) if low is not None else 0)
        parts.append(_magnitude(nfa, lo, False, None if high is None else Fraction(high), False, modulus=multiple_of,
                                fraction=False))
    if low is None or low < 0:
        mag_lo = Fraction(1 if high is None or high >= 0 else -high)
        mag_hi = None if low is None else Fraction(-low)
        parts.append(nfa.seq(nfa.literal(b"-"), _magnitude(nfa, mag_lo, False, mag_hi, False, fraction=False,
                                                           modulus=multiple_of)))
    return nfa.alt(*parts) if parts else nfa.never()


def _float_space(value: Number, exclusive: bool, upward: bool) -> Fraction | None:
    """The inclusive bound (``upward``: a lower one) for numerals with a fraction: the shortest decimal of the
    nearest float on the right side of ``value``, so rounding (monotone) keeps every numeral past it on that side and
    ``minimum: 0.1`` still lets ``0.1`` through. ``None``: no finite float fits."""
    exact = Fraction(value)
    direction = math.inf if upward else -math.inf
    limit = _MAX_FLOAT if upward else -_MAX_FLOAT
    if (exact > limit if upward else exact < limit) or (exact == limit and exclusive):
        return None
    if abs(exact) > _MAX_FLOAT:
        f = -sys.float_info.max if upward else sys.float_info.max
    else:
        f = float(exact)
        beyond = Fraction(f) > exact if upward else Fraction(f) < exact
        if not beyond and (Fraction(f) != exact or exclusive):
            f = math.nextafter(f, direction)
    return Fraction(repr(f))


def _signed(nfa: NFA, lo: Fraction | None, lo_open: bool, hi: Fraction | None, hi_open: bool,
            *, fraction: bool) -> Frag:
    """Numerals of values in the interval, with a sign where negative (never ``-0``)."""
    parts = []
    if hi is None or hi > 0 or (hi == 0 and not hi_open):
        m_lo, m_open = (Fraction(0), False) if lo is None or lo < 0 else (lo, lo_open)
        parts.append(_magnitude(nfa, m_lo, m_open, hi, hi_open, fraction=fraction))
    if lo is None or lo < 0:
        n_lo, n_open = (Fraction(0), True) if hi is None or hi >= 0 else (-hi, hi_open)
        n_hi = None if lo is None else -lo
        parts.append(nfa.seq(nfa.literal(b"-"), _magnitude(nfa, n_lo, n_open, n_hi, lo_open, fraction=fraction)))
    return nfa.alt(*parts) if parts else nfa.never()


def number_fragment(nfa: NFA, low: Number | None = None, high: Number | None = None, *, low_open: bool = False,
                    high_open: bool = False) -> Frag:
    """JSON numbers in the interval (bounds exact), an exponent only where unbounded; stamped as integers are."""
    return nfa.stamp(_template("number", low, high, low_open, high_open))


def _build_number(nfa: NFA, low: Number | None, high: Number | None, low_open: bool, high_open: bool) -> Frag:
    if low is None and high is None:
        return _free_number(nfa)
    lo_int = None if low is None else (math.floor(Fraction(low)) + 1 if low_open else math.ceil(Fraction(low)))
    hi_int = None if high is None else (math.ceil(Fraction(high)) - 1 if high_open else math.floor(Fraction(high)))
    whole = nfa.never() if lo_int is not None and hi_int is not None and lo_int > hi_int else \
        _build_integer(nfa, lo_int, hi_int, 1)
    flo = None if low is None else _float_space(low, low_open, upward=True)
    fhi = None if high is None else _float_space(high, high_open, upward=False)
    if (low is not None and flo is None) or (high is not None and fhi is None):
        return whole
    return nfa.alt(whole, _signed(nfa, flo, False, fhi, False, fraction=True))


def _free_number(nfa: NFA) -> Frag:
    def digits() -> Frag:
        return nfa.byte_ranges(_DIGIT)

    sign = nfa.optional(nfa.literal(b"-"))
    whole = nfa.alt(nfa.literal(b"0"), nfa.seq(nfa.byte_ranges(_NONZERO), nfa.star(digits())))
    fraction = nfa.optional(nfa.seq(nfa.literal(b"."), digits(), nfa.star(digits())))
    up = nfa.seq(nfa.optional(nfa.literal(b"+")), nfa.repeat(digits, 1, EXPONENT_DIGITS))
    down = nfa.seq(nfa.literal(b"-"), nfa.repeat(digits, 1, NEGATIVE_EXPONENT_DIGITS))
    exponent = nfa.optional(nfa.seq(nfa.byte_ranges([(0x45, 0x45), (0x65, 0x65)]), nfa.alt(up, down)))
    return nfa.seq(sign, whole, fraction, exponent)
