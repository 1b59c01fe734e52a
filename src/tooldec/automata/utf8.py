"""Unicode code point ranges as UTF-8 byte-range sequences, one per encoded length, no surrogates (after Russ
Cox's utf8 ranges)."""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["MAX_CODE_POINT", "utf8_sequences", "complement", "normalize_ranges"]

MAX_CODE_POINT = 0x10FFFF
_SURROGATES = (0xD800, 0xDFFF)


def normalize_ranges(ranges: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """Sorted, merged, surrogate-free inclusive ranges."""
    out: list[tuple[int, int]] = []
    for lo, hi in sorted(ranges):
        if out and lo <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    clean: list[tuple[int, int]] = []
    for lo, hi in out:
        if lo <= _SURROGATES[1] and hi >= _SURROGATES[0]:
            if lo < _SURROGATES[0]:
                clean.append((lo, _SURROGATES[0] - 1))
            if hi > _SURROGATES[1]:
                clean.append((_SURROGATES[1] + 1, hi))
        else:
            clean.append((lo, hi))
    return clean


def complement(ranges: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """All code points outside ``ranges``."""
    out, nxt = [], 0
    for lo, hi in normalize_ranges(ranges):
        if lo > nxt:
            out.append((nxt, lo - 1))
        nxt = hi + 1
    if nxt <= MAX_CODE_POINT:
        out.append((nxt, MAX_CODE_POINT))
    return normalize_ranges(out)


def utf8_sequences(lo: int, hi: int) -> list[list[tuple[int, int]]]:
    """Byte-range sequences whose union is exactly the UTF-8 encodings of ``lo..hi``.

    Examples:
        >>> utf8_sequences(0x61, 0x7A)
        [[(97, 122)]]
        >>> utf8_sequences(0xE9, 0xE9)
        [[(195, 195), (169, 169)]]
    """
    out: list[list[tuple[int, int]]] = []
    for a, b in normalize_ranges([(lo, hi)]):
        _split(a, b, out)
    return out


def _split(lo: int, hi: int, out: list[list[tuple[int, int]]]) -> None:
    if lo > hi:
        return
    for top in (0x7F, 0x7FF, 0xFFFF):
        if lo <= top < hi:
            _split(lo, top, out)
            _split(top + 1, hi, out)
            return
    if hi <= 0x7F:
        out.append([(lo, hi)])
        return
    length = len(chr(lo).encode())
    for i in range(1, length):
        mask = (1 << (6 * i)) - 1
        if lo & ~mask != hi & ~mask:
            if lo & mask:
                _split(lo, lo | mask, out)
                _split((lo | mask) + 1, hi, out)
                return
            if hi & mask != mask:
                _split(lo, (hi & ~mask) - 1, out)
                _split(hi & ~mask, hi, out)
                return
    out.append(list(zip(chr(lo).encode(), chr(hi).encode())))
