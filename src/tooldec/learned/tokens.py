"""Learned output rows: ToolDec's ``<T>`` trigger and ToolkenGPT's toolkens, as a small file.

Both learn only output rows of a frozen model: a learned token's logit is its row's dot product
with the final hidden state. ``<T>`` is one row (the grammar then picks the tool by name, so it
works for unseen tools); ToolkenGPT learns one row per tool. Once chosen, the model reads the
token's *expansion*, ordinary text. A file records the model it fits, and is refused for another.

Examples:
    >>> import numpy as np
    >>> rows = LearnedTokens(("<T>",), ("",), np.ones((1, 4), dtype=np.float32), "toy", 4, "abc", {})
    >>> rows.logits(np.array([1.0, 2.0, 0.0, -1.0], dtype=np.float32)).tolist()
    [2.0]
    >>> rows.size, rows.dim
    (1, 4)
"""

from __future__ import annotations

import io
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import ToolDecError

__all__ = ["TRIGGER", "LearnedTokenError", "LearnedTokens"]

TRIGGER = "<T>"
"""The name of ToolDec's one learned token."""

_FORMAT = 1


class LearnedTokenError(ToolDecError, ValueError):
    """A learned-token file that cannot be used: unreadable, or trained for another model."""


@dataclass(frozen=True, eq=False)
class LearnedTokens:
    """Learned output rows ``(len(names), dim)``, their names and what each expands to; the
    ``model`` file and ``vocab_fingerprint`` (unpadded) they were trained on. Immutable."""

    names: tuple[str, ...]
    expansions: tuple[str, ...]
    rows: np.ndarray
    model: str
    dim: int
    vocab_fingerprint: str
    meta: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        rows = np.ascontiguousarray(self.rows, dtype=np.float32)
        if rows.ndim != 2 or rows.shape != (len(self.names), self.dim):
            raise LearnedTokenError(f"rows have shape {rows.shape}, expected ({len(self.names)}, {self.dim})")
        if len(self.expansions) != len(self.names):
            raise LearnedTokenError(f"{len(self.names)} names but {len(self.expansions)} expansions")
        if len(set(self.names)) != len(self.names):
            raise LearnedTokenError(f"duplicate names among {list(self.names)}")
        rows.setflags(write=False)
        object.__setattr__(self, "rows", rows)
        object.__setattr__(self, "names", tuple(self.names))
        object.__setattr__(self, "expansions", tuple(self.expansions))

    @property
    def size(self) -> int:
        return len(self.names)

    def logits(self, hidden: np.ndarray) -> np.ndarray:
        """The learned tokens' logits for one final hidden state ``(dim,)`` (or a batch ``(n, dim)``)."""
        scores: np.ndarray = np.asarray(hidden, dtype=np.float32) @ self.rows.T
        return scores

    def check(self, dim: int, vocab_fingerprint: str) -> None:
        """Refuse rows trained for another model (``LearnedTokenError``)."""
        if dim != self.dim:
            raise LearnedTokenError(f"learned tokens {list(self.names)[:3]} were trained on {self.model} "
                                    f"(hidden size {self.dim}); this model's hidden size is {dim}")
        if vocab_fingerprint != self.vocab_fingerprint:
            raise LearnedTokenError(f"learned tokens {list(self.names)[:3]} were trained on {self.model}, "
                                    "whose vocabulary differs from this model's: train them again for it")

    def save(self, path: str | Path) -> Path:
        """Write a compressed ``.npz`` (rows as float16: 2 bytes per number, a few KB per row)."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        header = {"format": _FORMAT, "names": list(self.names), "expansions": list(self.expansions),
                  "model": self.model, "dim": self.dim, "vocab_fingerprint": self.vocab_fingerprint,
                  "meta": dict(self.meta)}
        buffer = io.BytesIO()
        np.savez_compressed(buffer, rows=self.rows.astype(np.float16),
                            header=np.frombuffer(json.dumps(header, sort_keys=True).encode(), dtype=np.uint8))
        path.write_bytes(buffer.getvalue())
        return path

    @classmethod
    def load(cls, path: str | Path) -> LearnedTokens:
        """Read a file written by :meth:`save` (``LearnedTokenError`` if it is none)."""
        path = Path(path)
        if not path.is_file():
            raise LearnedTokenError(f"no learned-token file at {path}")
        try:
            with np.load(path) as data:
                header = json.loads(bytes(data["header"]).decode())
                rows = data["rows"].astype(np.float32)
        except (OSError, KeyError, ValueError) as error:
            raise LearnedTokenError(f"{path} is not a learned-token file: {error}") from None
        if header.get("format") != _FORMAT:
            raise LearnedTokenError(f"{path}: format {header.get('format')!r}, expected {_FORMAT}")
        return cls(tuple(header["names"]), tuple(header["expansions"]), rows, header["model"], int(header["dim"]),
                   header["vocab_fingerprint"], header.get("meta", {}))

    @classmethod
    def trigger(cls, row: Sequence[float] | np.ndarray, *, model: str, vocab_fingerprint: str,
                meta: Mapping[str, Any] | None = None) -> LearnedTokens:
        """ToolDec's single ``<T>``, which expands to nothing (the grammar writes the call)."""
        array = np.asarray(row, dtype=np.float32).reshape(1, -1)
        return cls((TRIGGER,), ("",), array, model, array.shape[1], vocab_fingerprint, meta or {})
