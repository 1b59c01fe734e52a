"""The vocabulary laid out for mask computation, built once per vocabulary.

Two layouts of the same token bytes:

* by length, longest first, as one flat byte array with offsets: pushing all tokens through a
  dense DFA one byte column at a time touches only the tokens still long enough and alive;
* sorted by bytes: tokens sharing a prefix form one contiguous range, found by bisection, so a
  walk over the name trie only looks at tokens that can spell a name.
"""

from __future__ import annotations

import weakref
from bisect import bisect_left
from dataclasses import dataclass

import numpy as np

from ..tokens import Vocabulary

__all__ = ["TokenIndex"]


@dataclass(eq=False)
class TokenIndex:
    vocab: Vocabulary
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

    @property
    def words(self) -> int:
        """32-bit words of a packed mask over the whole vocabulary."""
        return (self.vocab.size + 31) // 32

    @property
    def size(self) -> int:
        return self.vocab.size

    def prefix_range(self, prefix: bytes, lo: int, hi: int) -> tuple[int, int]:
        """The range of ``sorted_bytes[lo:hi]`` whose tokens start with ``prefix`` (non-empty)."""
        tokens = self.sorted_bytes
        a = bisect_left(tokens, prefix, lo, hi)
        last = prefix[-1]
        z = hi if last == 255 else bisect_left(tokens, prefix[:-1] + bytes([last + 1]), a, hi)
        return a, z

    @classmethod
    def of(cls, vocab: Vocabulary) -> TokenIndex:
        """The index of ``vocab``, built on first use and shared afterwards."""
        index = _CACHE.get(vocab)
        if index is None:
            index = _CACHE[vocab] = cls._build(vocab)
        return index

    @classmethod
    def _build(cls, vocab: Vocabulary) -> TokenIndex:
        pairs = [(i, b) for i, b in enumerate(vocab.token_bytes) if b]
        pairs.sort(key=lambda p: -len(p[1]))
        row_of = {i: r for r, (i, _) in enumerate(pairs)}
        ids = np.array([i for i, _ in pairs], dtype=np.int32)
        lengths = np.array([len(b) for _, b in pairs], dtype=np.int32)
        offsets = np.zeros(len(pairs), dtype=np.int64)
        if len(pairs):
            offsets[1:] = np.cumsum(lengths[:-1])
        flat = np.frombuffer(b"".join(b for _, b in pairs), dtype=np.uint8)
        by_bytes = sorted(pairs, key=lambda p: p[1])
        first = flat[offsets] if len(pairs) else np.empty(0, np.uint8)
        order = np.argsort(first, kind="stable")
        bounds = np.searchsorted(first[order], np.arange(257))
        rows_by_first = [order[bounds[b] : bounds[b + 1]].astype(np.int64) for b in range(256)]
        return cls(
            vocab=vocab,
            ids=ids,
            lengths=lengths,
            offsets=offsets,
            flat=flat,
            sorted_bytes=[b for _, b in by_bytes],
            sorted_ids=[i for i, _ in by_bytes],
            special_ids=np.array(sorted(vocab.special), dtype=np.int32),
            eos_ids=np.array(sorted(vocab.eos_ids), dtype=np.int32),
            rows_by_first=rows_by_first,
            sorted_rows=np.array([row_of[i] for i, _ in by_bytes], dtype=np.int64),
        )


_CACHE: weakref.WeakKeyDictionary[Vocabulary, TokenIndex] = weakref.WeakKeyDictionary()
