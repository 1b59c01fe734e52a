"""Token masks: packed sets of allowed ids, and the int32 bitmask rows backends consume, in
XGrammar's and llguidance's layout (bit ``i % 32`` of word ``i // 32`` is token ``i``), so their
kernels apply (``tooldec.backends.torch_masks`` has the torch twins of these helpers).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..native import compiled

__all__ = ["Mask", "allocate_token_bitmask", "apply_token_bitmask_inplace", "bitmask_words", "unpack_bitmask"]

_native = compiled("tooldec.decoding._trie_walk")
_pack = None if _native is None else _native.pack
_fill = None if _native is None else _native.fill


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


_FEW_IDS = 64
"""Ids :meth:`Mask.sparse` sorts in Python rather than with NumPy."""

SPARSE_SHARE = 8
"""A mask whose ids take at most 1/SPARSE_SHARE of its bits' bytes keeps only the ids."""


@dataclass(eq=False)
class Mask:
    """The allowed tokens at one position (immutable once made), as packed bits over the
    vocabulary, or for a few tokens as sorted ids alone: 120 bytes where the bits are 19 KB at
    151k tokens, so a bounded cache holds a hundred times more.

    Attributes:
        bits: uint8, bit ``i`` of byte ``i // 8`` is token ``i``; ``None`` for a sparse mask.
        max_after: the most bytes any allowed token leaves to finish the call (budgets).
        known_count: how many tokens are allowed, ``-1`` until :attr:`count` counts them.
    """

    bits: np.ndarray | None
    max_after: int = 0
    _ids: np.ndarray | None = field(default=None, repr=False)
    known_count: int = field(default=-1, repr=False)
    _refused: tuple[int, np.ndarray] | None = field(default=None, repr=False)
    _words: dict[int, np.ndarray] | None = field(default=None, repr=False)
    _width: int = field(default=0, repr=False)
    """A sparse mask's 32-bit words over the vocabulary."""

    @classmethod
    def from_ids(cls, ids: np.ndarray, words: int, max_after: int = 0, *, unique: bool = True) -> Mask:
        """The mask of ``ids`` (any order, repeats allowed) over ``words`` 32-bit words; sparse when
        they are few. ``unique=False``: the bits are all the caller wants (its ids are not listed)."""
        ids = np.asarray(ids)
        if unique and ids.size * SPARSE_SHARE <= words:
            return cls.sparse(ids, words, max_after)
        if ids.size > words * 4:  # dense: set flags and pack them
            flags = np.zeros(words * 32, dtype=bool)
            flags[ids] = True
            return cls(np.packbits(flags, bitorder="little"), max_after, known_count=int(np.count_nonzero(flags)))
        if _pack is not None:  # the compiled module's loop: the NumPy passes were most of a small mask's cost
            ids = ids if ids.dtype == np.int32 else ids.astype(np.int32)
            bits, count, increasing = _pack(np.ascontiguousarray(ids), words)
            listed = ids if increasing else np.unique(ids) if unique else None
            return cls(np.frombuffer(bits, np.uint8), max_after, _ids=listed, known_count=count)
        ids = ids.astype(np.int64)
        if ids.size > 1 and not bool(np.all(ids[1:] > ids[:-1])):
            ids = np.unique(ids)
        packed = np.zeros(words * 4, dtype=np.uint8)
        np.add.at(packed, ids >> 3, np.left_shift(1, ids & 7).astype(np.uint8))  # distinct ids: add is or
        return cls(packed, max_after, _ids=ids.astype(np.int32), known_count=int(ids.size))

    @classmethod
    def sparse(cls, ids: np.ndarray, words: int, max_after: int = 0) -> Mask:
        """The sparse mask of ``ids`` (any order, repeats allowed, all below ``words * 32``); a few
        ids are sorted in Python, where NumPy's calls cost more than the sort."""
        if len(ids) <= _FEW_IDS:
            listed = sorted(set(ids.tolist() if isinstance(ids, np.ndarray) else ids))
            ends = (listed[0], listed[-1]) if listed else None
            ids = np.array(listed, dtype=np.int32)
        else:
            ids = np.asarray(ids)
            ids = ids if ids.dtype == np.int32 else ids.astype(np.int32)
            if ids.size > 1 and not bool(np.all(ids[1:] > ids[:-1])):
                ids = np.unique(ids)
            ends = (int(ids[0]), int(ids[-1])) if ids.size else None
        if ends is not None and not (0 <= ends[0] and ends[1] < words * 32):
            raise ValueError(f"token ids must be in [0, {words * 32}), got {ends[0]}..{ends[1]}")
        return cls(None, max_after, _ids=ids, known_count=int(ids.size), _width=words)

    @classmethod
    def from_sorted(cls, ids: np.ndarray, words: int, max_after: int, packed: np.ndarray | None) -> Mask:
        """The mask of sorted, distinct int32 ``ids`` whose bits a walk may have set in ``packed``
        already: sparse when they are few, as :meth:`from_ids` makes them."""
        if ids.size * SPARSE_SHARE <= words:
            return cls(None, max_after, _ids=ids, known_count=int(ids.size), _width=words)
        if packed is None:
            return cls.from_ids(ids, words, max_after)
        return cls(packed, max_after, _ids=ids if ids.size <= words * 4 else None, known_count=int(ids.size))

    @property
    def packed(self) -> np.ndarray:
        """The bits (see ``bits``); a sparse mask's are made anew on each call (a writable copy)."""
        return self.bits if self.bits is not None else self.words(self._width).view(np.uint8)

    @property
    def nbytes(self) -> int:
        extra = 0 if self._ids is None else int(self._ids.nbytes)
        extra += 0 if self._refused is None else int(self._refused[1].nbytes)
        if self._words:
            extra += sum(int(w.nbytes) for w in self._words.values())
        return (0 if self.bits is None else int(self.bits.nbytes)) + extra + 120

    @property
    def count(self) -> int:
        """How many tokens are allowed."""
        if self.known_count < 0:
            self.known_count = int(np.bitwise_count(self.packed).sum(dtype=np.int64))
        return self.known_count

    @property
    def ids(self) -> np.ndarray:
        """Sorted int32 ids (read-only), kept only when no larger than the bits its cache counted."""
        if self._ids is not None:
            return self._ids
        ids = np.flatnonzero(np.unpackbits(self.packed, bitorder="little")).astype(np.int32)
        if ids.nbytes <= self.packed.nbytes:
            self._ids = ids
        return ids

    def refused(self, size: int) -> np.ndarray:
        """Sorted int32 ids below ``size`` that are not allowed (in text, the short list); kept like
        :attr:`ids`. Treat as read-only."""
        found = self._refused
        if found is not None and found[0] == size:
            return found[1]
        packed = self.packed
        bits = min(size, packed.size * 8)
        ids = np.flatnonzero(np.unpackbits(packed, count=bits, bitorder="little") == 0).astype(np.int32)
        if size > bits:
            ids = np.concatenate([ids, np.arange(bits, size, dtype=np.int32)])
        if ids.nbytes <= packed.nbytes and self.bits is not None:
            self._refused = (size, ids)
        return ids

    def pick_lists(self, size: int) -> tuple[np.ndarray | None, np.ndarray | None]:
        """``(allowed, refused)`` ids for a sampler over ``size`` logits: only the shorter list,
        ``None`` for the other (both ``None``: every token is allowed).

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
        """The mask as ``n`` int32 words (zero padded); a dense mask's rows are kept."""
        if self.bits is None:
            row = np.zeros(n, dtype=np.int32)
            self.write(row)
            return row
        own = self.bits.view(np.int32)
        if own.size == n:
            return own
        if self._words is None:
            self._words = {}
        kept = self._words.get(n)
        if kept is None:
            kept = np.zeros(n, dtype=np.int32)
            kept[: min(n, own.size)] = own[:n]
            self._words[n] = kept
        return kept

    def write(self, row: np.ndarray) -> None:
        """Write the mask into the bitmask ``row`` (int32 words, C-contiguous).

        Examples:
            >>> row = np.full(2, -1, dtype=np.int32)
            >>> Mask.sparse(np.array([1, 33]), 2).write(row); row.tolist()
            [2, 2]
        """
        if self.bits is not None:
            row[:] = self.words(row.size)
            return
        assert self._ids is not None
        if _fill is not None:
            _fill(row, self._ids)
            return
        row[:] = 0
        ids = self._ids.astype(np.int64)
        ids = ids[ids < row.size * 32]
        np.bitwise_or.at(row.view(np.uint8), ids >> 3, np.left_shift(1, ids & 7).astype(np.uint8))

    def without(self, ids: np.ndarray) -> Mask:
        """This mask less ``ids`` (repeats, or ids it does not allow, change nothing), with its
        ``max_after``: a text mask less the few tokens a budget refuses, without listing its ids.

        Examples:
            >>> Mask.from_ids(np.arange(30), 1).without(np.array([3, 7])).count
            28
            >>> Mask.sparse(np.array([1, 3, 9]), 1).without(np.array([3])).ids.tolist()
            [1, 9]
        """
        ids = np.asarray(ids, dtype=np.int64)
        if self.bits is None:
            return Mask.sparse(np.setdiff1d(self.ids, ids), self._width, self.max_after)
        packed = self.bits.copy()
        np.bitwise_and.at(packed, ids >> 3, ~np.left_shift(1, ids & 7).astype(np.uint8))
        return Mask(packed, self.max_after)

    def has(self, ids: np.ndarray) -> np.ndarray:
        """:meth:`contains` for each of ``ids`` (all within the vocabulary), read from the bits.

        Examples:
            >>> Mask.from_ids(np.array([0, 5, 31]), 1).has(np.array([5, 6, 31])).tolist()
            [True, False, True]
            >>> Mask.sparse(np.array([0, 5, 31]), 1).has(np.array([5, 6, 31])).tolist()
            [True, False, True]
        """
        ids = np.asarray(ids, dtype=np.int64)
        if self.bits is None:
            assert self._ids is not None
            return np.isin(ids, self._ids)
        flags: np.ndarray = ((self.bits[ids >> 3] >> (ids & 7)) & 1).astype(bool)
        return flags

    def contains(self, token_id: int) -> bool:
        if self.bits is None:
            assert self._ids is not None
            at = int(np.searchsorted(self._ids, token_id))
            return at < self._ids.size and int(self._ids[at]) == token_id
        if not 0 <= token_id < self.bits.size * 8:
            return False
        return bool(self.bits[token_id >> 3] >> (token_id & 7) & 1)
