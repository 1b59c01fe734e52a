"""Run one experiment for one system, then report every system run so far: table and plot."""

from __future__ import annotations

import importlib
import json
import textwrap
from pathlib import Path
from types import ModuleType
from typing import Any

from .common import SYSTEMS, Session, System, beamed, constrained, markdown_table, run_subset

__all__ = ["EXPERIMENTS", "experiment", "report", "run", "systems_of"]

_ERROR_COUNTS = ("name_errors", "argument_errors", "format_errors")
"""Per-row error counts of ToolEval (the other tables list the errors in ``invalid_kinds``)."""

EXPERIMENTS = ("funcqa", "generalization", "tooleval", "restbench", "bfcl", "figure5", "naming")


def experiment(name: str) -> ModuleType:
    """The module of experiment ``name`` (``SUBSETS``, ``COLUMNS``, ``items``, ``score``, ``summarize``)."""
    if name not in EXPERIMENTS:
        raise ValueError(f"unknown benchmark {name!r}; known: {', '.join(EXPERIMENTS)}")
    return importlib.import_module(f"{__package__}.{name}")


def systems_of(name: str) -> tuple[str, ...]:
    """The systems experiment ``name`` runs (its ``SYSTEMS``, else baseline, repair, tooldec)."""
    return tuple(getattr(experiment(name), "SYSTEMS", SYSTEMS))


def run(name: str, session: Session, system: System, *, data: Path, out: Path, limit: int | None = None,
        subsets: tuple[str, ...] | None = None, resume: bool = False) -> dict[str, Any]:
    """Score ``limit`` items of each subset; write ``<subset>.jsonl`` and ``summary.json``.

    With ``resume``, rows already written are kept and only the rest is scored. The summary
    covers the subsets run now and those of an earlier ``summary.json`` of the same system.

    Returns:
        ``{"setup": ..., "subsets": {subset: summary}}`` as written to ``summary.json``.

    Raises:
        ValueError: ``system`` is not one of the experiment's systems.
    """
    module = experiment(name)
    if system not in systems_of(name):
        raise ValueError(f"{name} runs the systems {', '.join(systems_of(name))}, not {system!r}")
    folder = out / name / session.label / system
    session.out = out
    summaries: dict[str, Any] = {}
    previous = folder / "summary.json"
    if previous.exists():
        summaries.update(json.loads(previous.read_text()).get("subsets", {}))
    for subset in subsets or module.SUBSETS:
        items = module.items(data, subset)[:limit]

        def score(item: Any, subset: str = subset) -> dict[str, Any]:
            return dict(module.score(session, system, subset, item, data))

        rows = run_subset(subset, items, score, folder / f"{subset}.jsonl", desc=f"{name}/{subset} [{system}]",
                          resume=resume)
        summaries[subset] = module.summarize(rows)
        if constrained(system):
            errors = sum(len(r.get("invalid_kinds", [])) + sum(r.get(k, 0) for k in _ERROR_COUNTS) for r in rows)
            if errors:  # the claim every ToolDec row makes: never a tool error
                raise RuntimeError(f"{name}/{subset}: {system} wrote {errors} tool errors (see "
                                   f"{folder / f'{subset}.jsonl'}): a bug in the grammar or the experiment")
    order = list(module.SUBSETS)
    summaries = dict(sorted(summaries.items(), key=lambda kv: order.index(kv[0]) if kv[0] in order else 99))
    summary = {"setup": {**session.describe(), "system": system, "limit": limit, "decoding": "greedy",
                         **({"beam_width": session.beam_width} if beamed(system) else {})},
               "subsets": summaries}
    (folder / "summary.json").write_text(json.dumps(summary, indent=2))
    return summary


def report(name: str, folder: Path) -> str:
    """The Markdown table over every system under ``folder`` (``<out>/<bench>/<model>``), and its plot.

    Writes ``table.md`` and ``<bench>.png`` into ``folder``; returns the table.
    """
    module = experiment(name)
    systems = systems_of(name)
    found: dict[str, dict[str, Any]] = {}
    for system in systems:
        path = folder / system / "summary.json"
        if path.exists():
            found[system] = json.loads(path.read_text())
    rows = [{"subset": subset, "system": system, **summary}
            for system, data in found.items() for subset, summary in data["subsets"].items()]
    rows.sort(key=lambda r: (list(module.SUBSETS).index(r["subset"]) if r["subset"] in module.SUBSETS else 99,
                             systems.index(r["system"])))
    table = markdown_table(rows, ["subset", "system", *module.COLUMNS])
    extra = getattr(module, "extra_tables", None)
    if extra is not None:
        table += extra(folder)
    (folder / "table.md").write_text(table + "\n")
    if rows:
        plot = getattr(module, "plot", None)
        if plot is not None:
            plot(rows, folder / f"{name}.png")
        else:
            _plot(name, module, rows, folder / f"{name}.png", systems)
    return table


def _plot(name: str, module: ModuleType, rows: list[dict[str, Any]], path: Path, systems: tuple[str, ...]) -> None:
    """One panel per plotted metric: bars per subset, one colour per system."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    metrics = getattr(module, "PLOT", module.COLUMNS[:2])
    subsets = list(dict.fromkeys(r["subset"] for r in rows))
    shown = [s for s in systems if any(r["system"] == s for r in rows)]
    fig, axes = plt.subplots(1, len(metrics), figsize=(4.5 * len(metrics), 3.6), squeeze=False)
    width = 0.8 / max(len(shown), 1)
    for ax, metric in zip(axes[0], metrics):
        for j, system in enumerate(shown):
            values = [next((r.get(metric, float("nan")) for r in rows if r["subset"] == s and r["system"] == system),
                           float("nan")) for s in subsets]
            ax.bar([i + j * width for i in range(len(subsets))], values, width, label=system)
        ax.set_xticks([i + width * (len(shown) - 1) / 2 for i in range(len(subsets))], subsets, rotation=20,
                      fontsize=8)
        ax.set_title(metric)
        if any(word in metric for word in ("accuracy", "rate", "path")):
            ax.set_ylim(0, 1.05)  # a share: keep the scale even when every bar is 0
    n: dict[str, list[int]] = {}  # per subset, each system's n (in the legend's order) when they differ
    for system in shown:
        for r in rows:
            if r["system"] == system:
                n.setdefault(r["subset"], []).append(int(r.get("n", 0)))
    counts = {k: str(v[0]) if len(set(v)) == 1 else "/".join(map(str, v)) for k, v in n.items()}
    title = f"{name} (n per subset: {', '.join(f'{k}={v}' for k, v in counts.items())})"
    fig.suptitle(textwrap.fill(title, width=50 * len(metrics)), fontsize=9)  # about the figure width
    handles, labels = axes[0][0].get_legend_handles_labels()  # below the panels, where it hides no bar
    fig.legend(handles, labels, loc="lower center", ncol=min(len(shown), 5), fontsize=8, frameon=False)
    rows_of_labels = -(-len(shown) // 5)
    fig.tight_layout(rect=(0, 0.06 * rows_of_labels, 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)
