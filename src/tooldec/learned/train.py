"""Fit learned output rows on a frozen model's features, and measure when they fire.

Training minimises the cross-entropy of the demonstrations' next tokens over the model's logits
and the rows' ``h @ W.T``, the target at a call being the learned token, which teaches a row to
fire at calls and stay quiet in text (ToolkenGPT's objective). With the model frozen the loss is
convex in ``W``, so full-batch L-BFGS on the cached features finds it in seconds.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from .features import Features

__all__ = ["SwitchScores", "fit_rows", "switch_scores"]


def fit_rows(features: Features, rows: int, *, l2: float = 1e-4, steps: int = 200, seed: int = 0) -> tuple[np.ndarray, dict[str, Any]]:
    """The ``(rows, dim)`` matrix that minimises the mean cross-entropy plus ``l2 * |W|^2`` (weight
    decay keeps rows small where the data do not pin them down), and a record of the fit."""
    import torch

    torch.manual_seed(seed)
    h = torch.from_numpy(np.ascontiguousarray(features.h, dtype=np.float32))
    lse = torch.from_numpy(features.lse.astype(np.float32))
    ztarget = torch.from_numpy(features.ztarget.astype(np.float32))
    label = torch.from_numpy(features.label.astype(np.int64))
    called = label >= 0
    weight = torch.zeros(rows, h.shape[1], requires_grad=True)
    optimizer = torch.optim.LBFGS([weight], max_iter=steps, line_search_fn="strong_wolfe", tolerance_grad=1e-9,
                                  tolerance_change=1e-12, history_size=20)

    def loss_of(w: torch.Tensor) -> torch.Tensor:
        z = h @ w.T
        total = torch.logaddexp(lse, torch.logsumexp(z, dim=1))
        target = torch.where(called, z.gather(1, label.clamp(min=0)[:, None])[:, 0], ztarget)
        return (total - target).mean() + l2 * (w * w).sum()

    with torch.no_grad():
        before = float(loss_of(weight))

    def closure() -> torch.Tensor:
        optimizer.zero_grad()
        loss = loss_of(weight)
        loss.backward()  # type: ignore[no-untyped-call]
        return loss

    optimizer.step(closure)  # type: ignore[no-untyped-call]
    with torch.no_grad():
        after = float(loss_of(weight))
    record = {"loss_before": round(before, 5), "loss_after": round(after, 5), "positions": len(label),
              "calls": int(called.sum()), "l2": l2, "optimizer": f"L-BFGS, {steps} iterations at most, from zero"}
    return weight.detach().numpy().astype(np.float32), record


@dataclass(frozen=True)
class SwitchScores:
    """Whether the learned tokens fire (beat every logit of the model's own tokens) at the
    demonstrations' calls; ``tool_accuracy``: the share of those where the right row fires."""

    precision: float
    recall: float
    f1: float
    calls: int
    fired: int
    tool_accuracy: float

    def as_dict(self) -> dict[str, float]:
        return {key: float(value) for key, value in asdict(self).items()}


def switch_scores(features: Features, weight: np.ndarray, *, rows_of: dict[int, int] | None = None) -> SwitchScores:
    """Precision, recall and F1 of firing at the gold call positions (labels ``>= 0``);
    ``rows_of`` maps a label to its right row (default: the label itself)."""
    z = features.h @ np.asarray(weight, dtype=np.float32).T
    best = z.argmax(axis=1)
    fire = z.max(axis=1) > features.zmax
    gold = features.label >= 0
    tp, fp, fn = int((fire & gold).sum()), int((fire & ~gold).sum()), int((~fire & gold).sum())
    precision = tp / (tp + fp) if tp + fp else float("nan")
    recall = tp / (tp + fn) if tp + fn else float("nan")
    f1 = 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else float("nan")
    hits = fire & gold
    mapping = rows_of if rows_of is not None else {}
    right = [int(best[i]) == mapping.get(int(features.label[i]), int(features.label[i])) for i in np.flatnonzero(hits)]
    accuracy = float(np.mean(right)) if right else float("nan")
    return SwitchScores(precision, recall, f1, int(gold.sum()), int(fire.sum()), accuracy)
