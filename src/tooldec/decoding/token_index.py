"""The vocabulary laid out for mask computation, built once per vocabulary and freed with it.

Token bytes by length as one flat array (a DFA pushes all tokens a byte column at a time), and
sorted by bytes (a prefix's tokens are one range). Immutable once built but for ``extras``, a
locked cache of derived tables.
"""

from __future__ import annotations

import threading
import weakref
from bisect import bisect_left
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np

from ..tokens import Vocabulary

__all__ = ["TokenIndex"]

T = TypeVar("T")


@dataclass(eq=False)
class TokenIndex:
    """Token bytes of one vocabulary in the layouts the mask walks need."""

    size: int
    token_bytes: tuple[bytes | None, ...]
    ids: np.ndarray  # int32 token ids of byte tokens, longest first
    lengths: np.ndarray  # int32, aligned with ids
    offsets: np.ndarray  # int64 start of each token in ``flat``
    flat: np.ndarray  # uint8, all token bytes
    sorted_bytes: list[bytes]
    sorted_ids: list[int]
    special_ids: np.ndarray  # int32, tokens without bytes that are specials
    eos_ids: np.ndarray
    rows_by_first: list[np.ndarray]  # rows (positions in ``ids``) of the tokens starting with each byte
    sorted_rows: np.ndarray  # int64 row of each token of ``sorted_bytes``
    longest: int
    fingerprint: str
    special: dict[int, str]
    extras: dict[Any, Any] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def words(self) -> int:
        """32-bit words of a packed mask over the whole vocabulary."""
        return (self.size + 31) // 32

    @property
    def nbytes(self) -> int:
        return int(self.flat.nbytes + self.ids.nbytes * 3 + self.sorted_rows.nbytes) + 80 * len(self.sorted_bytes)

    def prefix_range(self, prefix: bytes, lo: int, hi: int) -> tuple[int, int]:
        """The range of ``sorted_bytes[lo:hi]`` whose tokens start with ``prefix`` (non-empty)."""
        tokens = self.sorted_bytes
        a = bisect_left(tokens, prefix, lo, hi)
        last = prefix[-1]
        z = hi if last == 255 else bisect_left(tokens, prefix[:-1] + bytes([last + 1]), a, hi)
        return a, z

    def extra(self, key: Any, make: Callable[[], T]) -> T:
        """A derived per-vocabulary table, built once (under a lock) and kept with the index."""
        found = self.extras.get(key)
        if found is not None:
            return found  # type: ignore[no-any-return]
        with self._lock:
            found = self.extras.get(key)
            if found is None:
                found = self.extras[key] = make()
            return found

    def rows_containing(self, byte: int) -> np.ndarray:
        """Rows of the tokens that contain ``byte`` anywhere (sorted)."""

        def make() -> np.ndarray:
            where = np.flatnonzero(self.flat == byte)
            rows = np.searchsorted(self.offsets, where, side="right") - 1
            return np.unique(rows).astype(np.int64)

        return self.extra(("containing", byte), make)

    @classmethod
    def of(cls, vocab: Vocabulary) -> TokenIndex:
        """The index of ``vocab``, built on first use and shared while the vocabulary lives."""
        with _LOCK:
            index = _CACHE.get(vocab)
        if index is None:
            index = cls._build(vocab)
            with _LOCK:
                index = _CACHE.setdefault(vocab, index)
        return index

    @classmethod
    def _build(cls, vocab: Vocabulary) -> TokenIndex:
        pairs = [(i, b) for i, b in enumerate(vocab.token_bytes) if b]
        pairs.sort(key=lambda p: -len(p[1]))
        ids = np.array([i for i, _ in pairs], dtype=np.int32)
        lengths = np.array([len(b) for _, b in pairs], dtype=np.int32)
        offsets = np.zeros(len(pairs), dtype=np.int64)
        if len(pairs):
            offsets[1:] = np.cumsum(lengths[:-1])
        flat = np.frombuffer(b"".join(b for _, b in pairs), dtype=np.uint8)
        order = sorted(range(len(pairs)), key=lambda r: pairs[r][1])
        first = flat[offsets] if len(pairs) else np.empty(0, np.uint8)
        by_first = np.argsort(first, kind="stable")
        bounds = np.searchsorted(first[by_first], np.arange(257))
        rows_by_first = [by_first[bounds[b] : bounds[b + 1]].astype(np.int64) for b in range(256)]
        return cls(
            size=vocab.size,
            token_bytes=vocab.token_bytes,
            ids=ids,
            lengths=lengths,
            offsets=offsets,
            flat=flat,
            sorted_bytes=[pairs[r][1] for r in order],
            sorted_ids=[pairs[r][0] for r in order],
            special_ids=np.array(sorted(vocab.special), dtype=np.int32),
            eos_ids=np.array(sorted(vocab.eos_ids), dtype=np.int32),
            rows_by_first=rows_by_first,
            sorted_rows=np.array(order, dtype=np.int64),
            longest=int(lengths.max()) if lengths.size else 1,
            fingerprint=vocab.fingerprint,
            special=dict(vocab.special),
        )


_LOCK = threading.Lock()
_CACHE: weakref.WeakKeyDictionary[Vocabulary, TokenIndex] = weakref.WeakKeyDictionary()
