"""``pick_token``: greedy picks from short allowed lists are made in Python; they must take the
token NumPy's argmax takes (the first of the best on ties), and sampling must stay inside the mask."""

from __future__ import annotations

import numpy as np

from tooldec.backends.llamacpp import FEW, pick_token


def test_greedy_pick_from_a_short_list_is_numpys_argmax() -> None:
    rng = np.random.default_rng(0)
    for size in (1, 2, 5, FEW, FEW + 1, 200):
        for _ in range(200):
            logits = rng.integers(-3, 3, 1000).astype(np.float32)  # many ties
            allowed = np.sort(rng.choice(1000, size, replace=False)).astype(np.int32)
            assert pick_token(logits, allowed, 0.0, rng) == int(allowed[int(np.argmax(logits[allowed]))])


def test_sampled_picks_stay_in_the_mask() -> None:
    rng = np.random.default_rng(1)
    logits = rng.standard_normal(500).astype(np.float32)
    allowed = np.array([3, 70, 71, 499], dtype=np.int32)
    picks = {pick_token(logits, allowed, 1.0, rng) for _ in range(300)}
    assert picks == set(allowed.tolist())
