"""What training a learned row needs from the frozen model: one forward pass per demonstration.

A learned row only enters the output layer, so its gradient needs, per position, only the final
hidden state and the log-sum-exp of the model's own logits. The text is tokenized in pieces cut
at the marks, so the token boundary at a call is the one a prompt ending there has at inference.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["Demonstration", "Features", "Mark", "extract", "tokenize_demo"]

IGNORE = -2
"""Label of a position that is not trained (inside a call's result)."""
TEXT = -1
"""Label of a position whose target is the model's own next token."""


@dataclass(frozen=True)
class Mark:
    """A call in a demonstration: the learned token is predicted at ``at``; the text it stands
    for (its result, up to ``end``) is not trained, as in ToolkenGPT."""

    at: int
    end: int
    tool: str


@dataclass(frozen=True)
class Demonstration:
    """A text with its calls marked, and a group label (``seen``, ``unseen``) for reports."""

    text: str
    marks: tuple[Mark, ...]
    group: str = ""

    def __post_init__(self) -> None:
        last = 0
        for mark in self.marks:
            if not last <= mark.at <= mark.end <= len(self.text):
                raise ValueError(f"marks must be in order and inside the text: {mark} in {self.text[:60]!r}")
            last = mark.end


def tokenize_demo(encode: Callable[[str], Sequence[int]], demo: Demonstration, labels: dict[str, int],
                  max_tokens: int) -> tuple[list[int], list[int]]:
    """Token ids and, per position, the label of the next token (``TEXT``, ``IGNORE`` or a row);
    ``labels`` maps a tool to its row (a tool not in it is not trained)."""
    ids: list[int] = []
    label: list[int] = []
    pos = 0
    pieces: list[tuple[str, int]] = []  # (text, label of the position before its first token)
    for mark in demo.marks:
        pieces.append((demo.text[pos:mark.at], TEXT))
        pieces.append((demo.text[mark.at:mark.end], labels.get(mark.tool, IGNORE)))
        pos = mark.end
    pieces.append((demo.text[pos:], TEXT))
    for text, first in pieces:
        if not text:
            continue
        piece = list(encode(text))
        inside = first != TEXT
        for j, token in enumerate(piece):
            if ids:  # the position before this token predicts it
                label.append(first if j == 0 else (IGNORE if inside else TEXT))
            ids.append(token)
    ids, label = ids[:max_tokens], label[:max_tokens - 1]
    return ids, label


@dataclass
class Features:
    """Per trained position: final hidden state, log-sum-exp and max of the model's logits, the
    logit of the true next token, the label and the demonstration's index (``seq``)."""

    h: np.ndarray
    lse: np.ndarray
    zmax: np.ndarray
    ztarget: np.ndarray
    label: np.ndarray
    seq: np.ndarray
    groups: list[str]

    @classmethod
    def concat(cls, parts: Sequence[Features]) -> Features:
        offsets = np.cumsum([0, *[len(p.groups) for p in parts]])
        full = [(p, int(off)) for p, off in zip(parts, offsets) if len(p.label)]  # an empty part has no width
        if not full:
            raise ValueError("no position to train on: every demonstration was empty")
        def joined(key: str) -> np.ndarray:
            return np.concatenate([getattr(p, key) for p, _ in full])

        return cls(h=joined("h"), lse=joined("lse"), zmax=joined("zmax"), ztarget=joined("ztarget"),
                   label=joined("label"), seq=np.concatenate([p.seq + off for p, off in full]),
                   groups=[g for p in parts for g in p.groups])

    def select(self, mask: np.ndarray) -> Features:
        return Features(self.h[mask], self.lse[mask], self.zmax[mask], self.ztarget[mask], self.label[mask],
                        self.seq[mask], self.groups)

    def of_group(self, group: str) -> Features:
        wanted = np.array([g == group for g in self.groups], dtype=bool)
        return self.select(wanted[self.seq]) if len(self.seq) else self

    @property
    def calls(self) -> int:
        return int((self.label >= 0).sum())


def _forward_llama(llm: Any) -> Callable[[list[int]], tuple[np.ndarray, np.ndarray]]:
    """Hidden states and logits at every position, from llama.cpp with embeddings switched on."""
    import llama_cpp

    width, dim = int(llm.n_vocab()), int(llm.n_embd())

    def forward(ids: list[int]) -> tuple[np.ndarray, np.ndarray]:
        if len(ids) > llm.n_batch:
            raise ValueError(f"a demonstration of {len(ids)} tokens is longer than the batch ({llm.n_batch})")
        llama_cpp.llama_set_embeddings(llm.ctx, True)
        try:
            llm.n_tokens = 0
            llm.eval(ids)
            h = np.stack([np.ctypeslib.as_array(llama_cpp.llama_get_embeddings_ith(llm.ctx, i), shape=(dim,))
                          for i in range(len(ids))]).copy()
            logits = np.stack([np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(llm.ctx, i), shape=(width,))
                               for i in range(len(ids))]).copy()
        finally:
            llama_cpp.llama_set_embeddings(llm.ctx, False)
            llm.n_tokens = 0  # the cache now holds this demonstration: forget it
        return h, logits

    return forward


def _forward_hf(model: Any) -> Callable[[list[int]], tuple[np.ndarray, np.ndarray]]:
    """Hidden states (after the final norm) and logits at every position, from transformers."""
    import torch

    base = getattr(model, model.base_model_prefix)

    def forward(ids: list[int]) -> tuple[np.ndarray, np.ndarray]:
        with torch.no_grad():
            hidden = base(input_ids=torch.tensor([ids])).last_hidden_state[0]
            logits = model.get_output_embeddings()(hidden)
        return hidden.float().numpy(), logits.float().numpy()

    return forward


def _reduce(h: np.ndarray, logits: np.ndarray, ids: list[int], label: list[int]) -> tuple[np.ndarray, ...]:
    keep = np.array([lab != IGNORE for lab in label], dtype=bool)
    n = len(label)
    z = logits[:n].astype(np.float64)
    zmax = z.max(axis=1)
    lse = zmax + np.log(np.exp(z - zmax[:, None]).sum(axis=1))
    target = z[np.arange(n), np.array(ids[1:n + 1])]
    return (h[:n][keep].astype(np.float32), lse[keep].astype(np.float32), zmax[keep].astype(np.float32),
            target[keep].astype(np.float32), np.array(label, dtype=np.int32)[keep])


def _key(model_name: str, demos: Sequence[Demonstration], labels: dict[str, int], max_tokens: int) -> str:
    digest = hashlib.sha256(json.dumps([model_name, sorted(labels.items()), max_tokens,
                                        [[d.text, [[m.at, m.end, m.tool] for m in d.marks], d.group] for d in demos]],
                                       ensure_ascii=False).encode())
    return digest.hexdigest()[:16]


def extract(model: Any, tokenizer: Any, demos: Sequence[Demonstration], labels: dict[str, int], *,
            max_tokens: int = 128, cache: Path | None = None, model_name: str = "", part: int = 100,
            progress: bool = True) -> Features:
    """Run the frozen model (llama.cpp or transformers) over ``demos`` and keep what training
    the rows needs; with a ``cache`` folder, in parts of ``part`` demonstrations, so that a
    stopped run resumes."""
    from tqdm import tqdm  # type: ignore[import-untyped]

    from ..backends.llamacpp import is_llama

    forward = _forward_llama(model) if is_llama(model) else _forward_hf(model)

    def encode(text: str) -> list[int]:
        return list(tokenizer.encode(text, add_special_tokens=False))

    folder = None if cache is None else cache / _key(model_name, demos, labels, max_tokens)
    parts: list[Features] = []
    bar = tqdm(total=len(demos), desc="features", unit="demo", disable=not progress, dynamic_ncols=True)
    for start in range(0, len(demos), part):
        chunk = demos[start:start + part]
        file = None if folder is None else folder / f"part{start // part:05d}.npz"
        if file is not None and file.exists():
            with np.load(file) as data:
                parts.append(Features(h=data["h"], lse=data["lse"], zmax=data["zmax"], ztarget=data["ztarget"],
                                      label=data["label"], seq=data["seq"], groups=[d.group for d in chunk]))
            bar.update(len(chunk))
            continue
        arrays: list[tuple[np.ndarray, ...]] = []
        for index, demo in enumerate(chunk):
            ids, label = tokenize_demo(encode, demo, labels, max_tokens)
            if len(ids) < 2:
                bar.update(1)
                continue
            h, logits = forward(ids)
            reduced = _reduce(h, logits, ids, label)
            arrays.append((*reduced, np.full(len(reduced[0]), index, dtype=np.int32)))
            bar.update(1)
        columns = [np.concatenate([a[k] for a in arrays]) if arrays else np.zeros((0, 0) if k == 0 else 0)
                   for k in range(6)]
        features = Features(h=columns[0], lse=columns[1], zmax=columns[2], ztarget=columns[3], label=columns[4],
                            seq=columns[5], groups=[d.group for d in chunk])
        if file is not None:
            file.parent.mkdir(parents=True, exist_ok=True)
            np.savez(file, h=features.h, lse=features.lse, zmax=features.zmax, ztarget=features.ztarget,
                     label=features.label, seq=features.seq)
        parts.append(features)
    bar.close()
    return Features.concat(parts)

