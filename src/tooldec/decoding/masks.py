"""Token masks: packed sets of allowed ids, and the int32 bitmask rows backends consume.

The bitmask layout is XGrammar's and llguidance's: int32 rows of ``ceil(vocab / 32)`` words, bit
``i % 32`` of word ``i // 32`` set when token ``i`` is allowed, so their kernels and tests apply.
``allocate_token_bitmask``, ``apply_token_bitmask_inplace`` (NumPy; ``tooldec.backends.torch_masks``
has the torch twin) are the helpers a harness needs.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .trie_walk import _native

__all__ = ["Mask", "allocate_token_bitmask", "apply_token_bitmask_inplace", "bitmask_words", "unpack_bitmask"]

_pack = None if _native is None else _native.pack


def bitmask_words(vocab_size: int) -> int:
    """Int32 words in one bitmask row for ``vocab_size`` logits."""
    return (vocab_size + 31) // 32


def allocate_token_bitmask(batch: int, vocab_size: int) -> np.ndarray:
    """A ``(batch, ceil(vocab_size / 32))`` int32 bitmask, every token allowed.

    Examples:
        >>> allocate_token_bitmask(2, 40).shape
        (2, 2)
    """
    return np.full((batch, bitmask_words(vocab_size)), -1, dtype=np.int32)


def unpack_bitmask(bitmask: np.ndarray, vocab_size: int) -> np.ndarray:
    """Boolean ``(..., vocab_size)`` allowed flags of an int32 bitmask (row or batch)."""
    flags = np.unpackbits(np.ascontiguousarray(bitmask).view(np.uint8), axis=-1, bitorder="little")
    return flags[..., :vocab_size].astype(bool)


def apply_token_bitmask_inplace(logits: np.ndarray, bitmask: np.ndarray, indices: list[int] | None = None) -> None:
    """Set the logits of disallowed tokens to ``-inf`` (rows ``indices``, default all).

    Args:
        logits: ``(vocab,)`` or ``(batch, vocab)`` float array, modified in place.
        bitmask: ``(words,)`` or ``(batch, words)`` int32; logits past ``32 * words`` are masked.
        indices: Which rows of a batch to mask (the bitmask is indexed the same way).

    Examples:
        >>> logits = np.zeros(5, dtype=np.float32)
        >>> apply_token_bitmask_inplace(logits, np.array([0b10110], dtype=np.int32))
        >>> logits.tolist()
        [-inf, 0.0, 0.0, -inf, 0.0]
    """
    rows_logits = logits[None, :] if logits.ndim == 1 else logits
    rows_mask = bitmask[None, :] if bitmask.ndim == 1 else bitmask
    width = rows_logits.shape[-1]
    chosen = range(rows_logits.shape[0]) if indices is None else indices
    for row in chosen:
        allowed = unpack_bitmask(rows_mask[row], min(width, rows_mask.shape[-1] * 32))
        target = rows_logits[row]
        target[: allowed.size][~allowed] = -np.inf
        target[allowed.size:] = -np.inf


@dataclass(eq=False)
class Mask:
    """The allowed tokens at one position, as packed bits over the vocabulary (immutable once made).

    Attributes:
        packed: uint8, little-endian bit order: bit ``i`` of byte ``i // 8`` is token ``i``
            (an int32 bitmask row viewed as bytes).
        max_after: the most bytes any allowed token leaves to finish the call (budgets).
    """

    packed: np.ndarray
    max_after: int = 0
    _ids: np.ndarray | None = field(default=None, repr=False)
    _count: int = field(default=-1, repr=False)
    _refused: tuple[int, np.ndarray] | None = field(default=None, repr=False)
    _words: dict[int, np.ndarray] | None = field(default=None, repr=False)

    @classmethod
    def from_ids(cls, ids: np.ndarray, words: int, max_after: int = 0, *, unique: bool = True) -> Mask:
        """The mask of ``ids`` (any order, repeats allowed), its count known without unpacking;
        ``unique=False``: the bits are all the caller wants (ids out of order are not listed)."""
        ids = np.asarray(ids)
        if ids.size > words * 4:  # dense: set flags and pack them
            flags = np.zeros(words * 32, dtype=bool)
            flags[ids] = True
            return cls(np.packbits(flags, bitorder="little"), max_after, _count=int(np.count_nonzero(flags)))
        if _pack is not None:  # the compiled module's loop: the NumPy passes were most of a small mask's cost
            ids = ids if ids.dtype == np.int32 else ids.astype(np.int32)
            bits, count, increasing = _pack(np.ascontiguousarray(ids), words)
            listed = ids if increasing else np.unique(ids) if unique else None
            return cls(np.frombuffer(bits, np.uint8), max_after, _ids=listed, _count=count)
        ids = ids.astype(np.int64)
        if ids.size > 1 and not bool(np.all(ids[1:] > ids[:-1])):
            ids = np.unique(ids)
        packed = np.zeros(words * 4, dtype=np.uint8)
        np.add.at(packed, ids >> 3, np.left_shift(1, ids & 7).astype(np.uint8))  # distinct ids: add is or
        return cls(packed, max_after, _ids=ids.astype(np.int32), _count=int(ids.size))

    @classmethod
    def union(cls, parts: list[np.ndarray], words: int, max_after: int = 0) -> Mask:
        """The mask of several packed masks or-ed together."""
        packed = np.zeros(words * 4, dtype=np.uint8)
        for part in parts:
            packed |= part
        return cls(packed, max_after)

    @property
    def nbytes(self) -> int:
        extra = 0 if self._ids is None else int(self._ids.nbytes)
        extra += 0 if self._refused is None else int(self._refused[1].nbytes)
        if self._words:
            extra += sum(int(w.nbytes) for w in self._words.values())
        return int(self.packed.nbytes) + extra + 120

    @property
    def count(self) -> int:
        """How many tokens are allowed."""
        if self._count < 0:
            self._count = int(np.bitwise_count(self.packed).sum(dtype=np.int64))
        return self._count

    @property
    def ids(self) -> np.ndarray:
        """Sorted int32 ids (treat as read-only). Kept only when no larger than the packed mask:
        a cached mask must not grow past the size its cache counted (a text mask's ids are 32
        times its bits)."""
        if self._ids is not None:
            return self._ids
        ids = np.flatnonzero(np.unpackbits(self.packed, bitorder="little")).astype(np.int32)
        if ids.nbytes <= self.packed.nbytes:
            self._ids = ids
        return ids

    def refused(self, size: int) -> np.ndarray:
        """Sorted int32 ids below ``size`` that are not allowed (ids past the mask's bits are not);
        kept like :attr:`ids` when no larger than the packed mask (in text, where nearly every
        token is allowed, this is the short list). Treat as read-only."""
        found = self._refused
        if found is not None and found[0] == size:
            return found[1]
        bits = min(size, self.packed.size * 8)
        ids = np.flatnonzero(np.unpackbits(self.packed, count=bits, bitorder="little") == 0).astype(np.int32)
        if size > bits:
            ids = np.concatenate([ids, np.arange(bits, size, dtype=np.int32)])
        if ids.nbytes <= self.packed.nbytes:
            self._refused = (size, ids)
        return ids

    def pick_lists(self, size: int) -> tuple[np.ndarray | None, np.ndarray | None]:
        """``(allowed, refused)`` ids for a sampler over ``size`` logits: only the shorter list,
        ``None`` for the other (both ``None``: every token is allowed). Listing a text mask's tens
        of thousands of allowed ids took 0.1-0.3 ms a token; its few refused ones are kept with
        the cached mask.

        Examples:
            >>> Mask.from_ids(np.arange(30), 1).pick_lists(32)
            (None, array([30, 31], dtype=int32))
            >>> Mask.from_ids(np.array([3]), 1).pick_lists(32)
            (array([3], dtype=int32), None)
        """
        if self.count * 2 <= size:
            return self.ids, None
        refused = self.refused(size)
        return None, refused if refused.size else None

    def words(self, n: int) -> np.ndarray:
        """The mask as ``n`` int32 words (zero padded: ids past the vocabulary are masked)."""
        own = self.packed.view(np.int32)
        if own.size == n:
            return own
        if self._words is None:
            self._words = {}
        row = self._words.get(n)
        if row is None:
            row = np.zeros(n, dtype=np.int32)
            row[: min(n, own.size)] = own[:n]
            self._words[n] = row
        return row

    def has(self, ids: np.ndarray) -> np.ndarray:
        """:meth:`contains` for each of ``ids`` (all within the vocabulary), read from the bits.

        Examples:
            >>> Mask.from_ids(np.array([0, 5, 31]), 1).has(np.array([5, 6, 31])).tolist()
            [True, False, True]
        """
        ids = np.asarray(ids, dtype=np.int64)
        flags: np.ndarray = ((self.packed[ids >> 3] >> (ids & 7)) & 1).astype(bool)
        return flags

    def contains(self, token_id: int) -> bool:
        if not 0 <= token_id < self.packed.size * 8:
            return False
        return bool(self.packed[token_id >> 3] >> (token_id & 7) & 1)
