"""``Mask.sparse`` sorts and dedupes any ids, a few in Python and more with NumPy, the same way."""

from __future__ import annotations

import numpy as np
import pytest

from tooldec.decoding.masks import _FEW_IDS, Mask


@pytest.mark.parametrize("size", [0, 1, 3, 40, _FEW_IDS, 500])  # 40 and repeats: still few
def test_sparse_ids_are_sorted_and_distinct_whatever_the_path(size: int) -> None:
    rng = np.random.default_rng(size)
    words = 4740  # Qwen's 151,669 ids in 32-bit words
    ids = rng.integers(0, words * 32, size=size)
    ids = np.concatenate([ids, ids[: size // 3]])  # repeats, out of order
    for given in (ids, ids.astype(np.int32), ids.tolist()):
        mask = Mask.sparse(given, words)  # type: ignore[arg-type]
        assert mask.ids.dtype == np.int32
        assert mask.ids.tolist() == sorted(set(ids.tolist()))
        assert mask.count == len(set(ids.tolist()))
        row = np.zeros(words, dtype=np.int32)
        mask.write(row)
        assert np.flatnonzero(np.unpackbits(row.view(np.uint8), bitorder="little")).tolist() == mask.ids.tolist()


@pytest.mark.parametrize("bad", [-1, 8 * 32])
@pytest.mark.parametrize("others", [1, _FEW_IDS + 1])
def test_sparse_refuses_ids_outside_the_vocabulary(bad: int, others: int) -> None:
    with pytest.raises(ValueError, match="token ids must be in"):
        Mask.sparse(np.array([bad, *range(10, 10 + others)]), 8)
