"""Decimal integers and numbers within bounds, as byte NFAs.

JSON Schema bounds are enforced in the text itself: ``minimum: 1, maximum: 12`` becomes the
language ``[1-9]|1[0-2]``. Bounds are whole numbers (``tools.schema`` rejects others); a bounded
number has no exponent, so that its digits alone decide whether it is in range.
"""

from __future__ import annotations

from .nfa import NFA, Frag

__all__ = ["integer_fragment", "number_fragment"]

EXPONENT_DIGITS = 2
"""At most this many exponent digits: ``1e99`` is fine, ``1e5695206`` would parse as infinity."""

_DIGIT = [(0x30, 0x39)]
_NONZERO = [(0x31, 0x39)]


def _digits(nfa: NFA, low: int, high: int | None) -> Frag:
    """``low``..``high`` (``None``: unbounded) decimal digits of any value."""
    return nfa.repeat(lambda: nfa.byte_ranges(_DIGIT), low, high)


def _same_length(nfa: NFA, a: str, b: str) -> Frag:
    """Digit strings of len(a) between a and b inclusive (a <= b, same length, leading zeros allowed)."""
    if not a:
        return nfa.empty()
    if a[0] == b[0]:
        return nfa.seq(nfa.literal(a[0].encode()), _same_length(nfa, a[1:], b[1:]))
    n = len(a) - 1
    x, y = ord(a[0]), ord(b[0])
    parts = [nfa.seq(nfa.literal(a[0].encode()), _same_length(nfa, a[1:], "9" * n))]
    if y - x > 1:
        parts.append(nfa.seq(nfa.byte_ranges([(x + 1, y - 1)]), _digits(nfa, n, n)))
    parts.append(nfa.seq(nfa.literal(b[0].encode()), _same_length(nfa, "0" * n, b[1:])))
    return nfa.alt(*parts)


def _natural(nfa: NFA, low: int, high: int | None) -> Frag:
    """Canonical decimal numerals (no leading zeros) of the integers in ``low..high``, low >= 0."""
    if high is not None and low > high:
        return nfa.never()
    parts = []
    last = len(str(high)) if high is not None else len(str(low))
    for length in range(len(str(low)), last + 1):
        lo = low if length == len(str(low)) else 10 ** (length - 1)
        hi = high if high is not None and length == len(str(high)) else 10**length - 1
        if lo <= hi:
            parts.append(_same_length(nfa, str(lo), str(hi)))
    if high is None:  # every numeral longer than ``low``
        parts.append(nfa.seq(nfa.byte_ranges(_NONZERO), _digits(nfa, len(str(low)), None)))
    return nfa.alt(*parts) if parts else nfa.never()


def integer_fragment(nfa: NFA, low: int | None = None, high: int | None = None) -> Frag:
    """Integers in ``[low, high]`` (inclusive; ``None`` is unbounded), written as JSON writes them."""
    parts = []
    if high is None or high >= 0:
        parts.append(_natural(nfa, max(low, 0) if low is not None else 0, high))
    if low is None or low < 0:
        mag_low = 1 if high is None or high >= 0 else -high
        mag_high = None if low is None else -low
        parts.append(nfa.seq(nfa.literal(b"-"), _natural(nfa, mag_low, mag_high)))
    return nfa.alt(*parts) if parts else nfa.never()


def _fraction(nfa: NFA, kind: str) -> Frag:
    dot = nfa.literal(b".")
    if kind == "any":
        return nfa.optional(nfa.seq(dot, _digits(nfa, 1, None)))
    if kind == "zero":
        return nfa.optional(nfa.seq(dot, nfa.repeat(lambda: nfa.literal(b"0"), 1, None)))
    # nonzero: at least one digit 1-9
    return nfa.seq(dot, _digits(nfa, 0, None), nfa.byte_ranges(_NONZERO), _digits(nfa, 0, None))


def _magnitude(nfa: NFA, low: int, low_open: bool, high: int | None, high_open: bool) -> Frag:
    """Non-negative decimals x with low <(=) x <(=) high, without exponent."""
    parts = []
    if high is not None and low == high:
        if not (low_open or high_open):
            parts.append(nfa.seq(_natural(nfa, low, low), _fraction(nfa, "zero")))
        return nfa.alt(*parts) if parts else nfa.never()
    parts.append(nfa.seq(_natural(nfa, low, low), _fraction(nfa, "nonzero" if low_open else "any")))
    inner_high = None if high is None else high - 1
    if inner_high is None or inner_high >= low + 1:
        parts.append(nfa.seq(_natural(nfa, low + 1, inner_high), _fraction(nfa, "any")))
    if high is not None and not high_open:
        parts.append(nfa.seq(_natural(nfa, high, high), _fraction(nfa, "zero")))
    return nfa.alt(*parts)


def number_fragment(
    nfa: NFA,
    low: int | None = None,
    high: int | None = None,
    *,
    low_open: bool = False,
    high_open: bool = False,
) -> Frag:
    """JSON numbers in the interval; unbounded numbers may use a fraction and a short exponent."""
    if low is None and high is None:
        sign = nfa.optional(nfa.literal(b"-"))
        exponent = nfa.optional(
            nfa.seq(nfa.byte_ranges([(0x45, 0x45), (0x65, 0x65)]), nfa.optional(nfa.byte_ranges([(0x2B, 0x2B), (0x2D, 0x2D)])), _digits(nfa, 1, EXPONENT_DIGITS))
        )
        return nfa.seq(sign, _natural(nfa, 0, None), _fraction(nfa, "any"), exponent)
    parts = []
    if high is None or high > 0 or (high == 0 and not high_open):
        lo, lo_open = (0, False) if low is None or low < 0 else (low, low_open)
        parts.append(_magnitude(nfa, lo, lo_open, high, high_open))
    if low is None or low < 0:
        # x = -m with m in (max(-high, 0) .. -low)
        if high is None or high >= 0:
            m_low, m_low_open = 0, True  # strictly negative values; zero is covered above
        else:
            m_low, m_low_open = -high, high_open
        m_high = None if low is None else -low
        parts.append(nfa.seq(nfa.literal(b"-"), _magnitude(nfa, m_low, m_low_open, m_high, low_open)))
    return nfa.alt(*parts) if parts else nfa.never()
