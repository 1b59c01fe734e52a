"""The learned tokens of the paper's Experiment II: ``<T>`` and toolkens trained on the seen tools.

Protocol (ToolDec section 5.1, ToolkenGPT's data): the model is frozen; only output rows are
learned, from the benchmark's training texts restricted to the *seen* tools: KAMEL's first 30
relations (of 234) and four FuncQA operators (of 13: ``add``, ``subtract``, ``multiply``,
``divide``; the paper says four, not which). ``<T>`` is one row for every call; ToolkenGPT gets
one row per seen tool. Caps that fit this 2-core machine (per seen tool, in file order):

* KAMEL: 30 training texts per seen relation (of 50), 5 more held out per seen relation and 2
  per unseen relation (for the mode-switching table), at most 96 tokens each.
* FuncQA: 40 training texts per seen operator (of 50), the other 10 held out, and 10 per unseen
  operator, at most 128 tokens each.

The rows are saved under ``<out>/figure5/<model>/learned/`` (``kamel_trigger.npz``,
``kamel_toolkens.npz``, ``funcqa_...``: a few KB to 100 KB, committed beside the results they
produce), with the held-out mode-switching scores (the paper's A.7) in their metadata; a later
run loads them instead of training. Features are cached in ``.cache/features`` (resumable).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

from tooldec.learned import Demonstration, LearnedTokens, extract, fit_rows, switch_scores
from tooldec.learned.features import Features

from ..datasets import (
    FUNCQA_OPS,
    funcqa_demonstrations,
    kamel_demonstrations,
    kamel_tools,
)
from .common import Session

__all__ = ["FUNCQA_SEEN", "KAMEL_SEEN", "PROTOCOLS", "Protocol", "Task", "learned_tokens", "seen_tools", "split"]

Task = Literal["kamel", "funcqa"]
Kind = Literal["trigger", "toolkens"]
KAMEL_SEEN = 30
FUNCQA_SEEN = ("add", "subtract", "multiply", "divide")


@dataclass(frozen=True)
class Protocol:
    """Caps of one task's training data (texts per tool, in file order)."""

    train_per_tool: int
    heldout_per_seen: int
    heldout_per_unseen: int
    max_tokens: int


PROTOCOLS: dict[str, Protocol] = {"kamel": Protocol(30, 5, 2, 96), "funcqa": Protocol(40, 10, 10, 128)}


def all_tools(task: Task, data: Path) -> list[str]:
    """Every tool of the task, seen ones first (in their order)."""
    if task == "kamel":
        return [t["name"] for t in kamel_tools(data)]
    return [*FUNCQA_SEEN, *(op for op in FUNCQA_OPS if op not in FUNCQA_SEEN)]


def seen_tools(task: Task, data: Path) -> list[str]:
    return all_tools(task, data)[:KAMEL_SEEN] if task == "kamel" else list(FUNCQA_SEEN)


def split(task: Task, data: Path, protocol: Protocol | None = None) -> dict[str, list[Demonstration]]:
    """``train`` (seen tools), ``seen`` and ``unseen`` (held out) demonstrations under the caps."""
    protocol = protocol or PROTOCOLS[task]
    demos = kamel_demonstrations(data) if task == "kamel" else funcqa_demonstrations(data)
    seen = set(seen_tools(task, data))
    by_tool: dict[str, list[Demonstration]] = defaultdict(list)
    for demo in demos:
        by_tool[demo.marks[0].tool].append(demo)
    out: dict[str, list[Demonstration]] = {"train": [], "seen": [], "unseen": []}
    for tool in all_tools(task, data):
        items = by_tool.get(tool, [])
        if tool in seen:
            out["train"] += [_grouped(d, "train") for d in items[: protocol.train_per_tool]]
            out["seen"] += [_grouped(d, "seen") for d in
                            items[protocol.train_per_tool: protocol.train_per_tool + protocol.heldout_per_seen]]
        else:
            out["unseen"] += [_grouped(d, "unseen") for d in items[: protocol.heldout_per_unseen]]
    return out


def _grouped(demo: Demonstration, group: str) -> Demonstration:
    return Demonstration(demo.text, demo.marks, group)


def _features(session: Session, task: Task, data: Path, protocol: Protocol, progress: bool) -> Features:
    parts = split(task, data, protocol)
    labels = {tool: i for i, tool in enumerate(all_tools(task, data))}
    demos = [*parts["train"], *parts["seen"], *parts["unseen"]]
    cache = Path(".cache") / "features"
    features: Features = session.cached(("features", task, protocol), lambda: extract(
        session.model, session.tokenizer, demos, labels, max_tokens=protocol.max_tokens, cache=cache,
        model_name=session.path.name, progress=progress))
    return features


def learned_tokens(session: Session, task: Task, kind: Kind, data: Path, folder: Path, *,
                   protocol: Protocol | None = None, progress: bool = True) -> LearnedTokens:
    """Load ``<folder>/<task>_<kind>.npz``, or train it (and save it) when it is not there."""
    path = folder / f"{task}_{kind}.npz"
    if path.exists():
        learned = LearnedTokens.load(path)
        learned.check(_dim(session), session.vocab.fingerprint)
        return learned
    protocol = protocol or PROTOCOLS[task]
    features = _features(session, task, data, protocol, progress)
    seen = seen_tools(task, data)
    train = features.of_group("train")
    if kind == "trigger":
        names: tuple[str, ...] = ("<T>",)
        expansions: tuple[str, ...] = ("",)
        rows_of: dict[int, int] | None = None
        relabel = _as_trigger
    else:
        names = tuple(f"<{tool}>" for tool in seen)
        expansions = tuple(f"<{tool}>(" if task == "funcqa" else f'<tool_call>\n{{"name": "{tool}"' for tool in seen)
        rows_of = {i: i for i in range(len(seen))}
        relabel = _identity
    weight, record = fit_rows(relabel(train), len(names))
    scores = {group: switch_scores(relabel(features.of_group(group)), weight,
                                   rows_of=_rows_for_unseen(rows_of, len(all_tools(task, data)))).as_dict()
              for group in ("seen", "unseen")}
    meta: dict[str, Any] = {
        "task": task, "kind": kind, "seen_tools": seen, "protocol": asdict(protocol), "training": record,
        "features": f"{session.backend} on {session.path.name} (final hidden state after the last norm)",
        "train_texts": len(split(task, data, protocol)["train"]), "switching": scores,
    }
    learned = LearnedTokens(names, expansions, weight, session.path.name, weight.shape[1], session.vocab.fingerprint,
                            meta)
    learned.save(path)
    (folder / f"{task}_{kind}.json").write_text(json.dumps(meta, indent=2) + "\n")
    return learned


def _as_trigger(features: Features) -> Features:
    """Every call is the one ``<T>`` row."""
    out = Features(features.h, features.lse, features.zmax, features.ztarget, features.label.copy(), features.seq,
                   features.groups)
    out.label[out.label >= 0] = 0
    return out


def _identity(features: Features) -> Features:
    return features


def _rows_for_unseen(rows_of: dict[int, int] | None, tools: int) -> dict[int, int] | None:
    """Toolkens: an unseen tool's label has no right row (-1)."""
    if rows_of is None:
        return None
    return {label: rows_of.get(label, -1) for label in range(tools)}


def _dim(session: Session) -> int:
    model = session.model
    return int(model.n_embd()) if session.backend == "llamacpp" else int(model.config.hidden_size)


def switching_rows(folder: Path, tasks: Sequence[str] = ("kamel", "funcqa")) -> list[dict[str, Any]]:
    """The mode-switching table (A.7) from the metadata of the saved rows."""
    rows = []
    for task in tasks:
        for kind in ("trigger", "toolkens"):
            path = folder / f"{task}_{kind}.json"
            if not path.exists():
                continue
            meta = json.loads(path.read_text())
            for group, scores in meta["switching"].items():
                rows.append({"task": task, "tokens": "<T>" if kind == "trigger" else "toolkens", "tools": group,
                             **scores})
    return rows
