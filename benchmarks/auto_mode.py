"""Auto mode against llama.cpp's own server: BFCL in ``tool_choice="auto"``.

Run from the repository root after ``make setup`` (``make qwen`` for Qwen, ``make llama-server``
for the server)::

    TOOLDEC_THREADS=1 OMP_NUM_THREADS=1 .venv/bin/python benchmarks/auto_mode.py \\
        --model smollm2 --model qwen --limit 20 --out runs/auto_mode
    .venv/bin/python benchmarks/auto_mode.py --out runs/auto_mode --report   # table + PNG only
    .venv/bin/python benchmarks/auto_mode.py --out runs/auto_mode --report --recount   # count again
    .venv/bin/python benchmarks/auto_mode.py --out runs/auto_mode --report --limit 20  # first 20 items only
    .venv/bin/python benchmarks/auto_mode.py --out runs/auto_mode --report --common   # items every system has

Work: the first ``--limit`` items of each BFCL v4 category (simple_python, multiple, parallel,
parallel_multiple, irrelevance) from ``--data`` / ``$TOOLDEC_DATA``. The question's messages and
its functions (BFCL types mapped to JSON Schema) go to every system, greedy, at most
``--max-tokens`` new tokens, ``tool_choice="auto"``. Systems, one model process at a time:

* ``tooldec``: ``ToolDecoder`` on the llama.cpp backend (llama-cpp-python), Hermes dialect with
  every declared opener, the prompt rendered by the model's chat template (with its tools when
  the template takes them, else tooldec's tool instructions in a system message);
* ``unconstrained``: the same loop and prompt without the mask;
* ``llama-server``: ``llama-server --jinja`` (``make llama-server``: the llama.cpp that
  llama-cpp-python vendors) on the same GGUF, started on 127.0.0.1 and driven with the official
  ``openai`` client; the server renders the same messages and tools with the GGUF's template.

Every answer is counted by ``benchmarks.paper.experiments.auto_mode.count_answer`` (the Hermes
dialect's ``scan``, also on the server's ``content``). Writes ``OUT/<model>/<system>.jsonl`` (one
line per item, appended; items already there are skipped, so a stopped run resumes),
``OUT/<model>/setup.json``, and then ``OUT/auto_mode.md`` and ``OUT/auto_mode.png`` over every
record found.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

_ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(_ROOT / "src"), str(_ROOT)]  # tooldec from this checkout, and benchmarks.paper

from benchmarks.paper.datasets import bfcl_items, data_dir  # noqa: E402
from benchmarks.paper.experiments.auto_mode import CATEGORIES, Request, count_answer, request, summarize  # noqa: E402
from benchmarks.paper.experiments.common import markdown_table  # noqa: E402
from tooldec.dialects import Hermes  # noqa: E402

SYSTEMS = ("tooldec", "unconstrained", "llama-server", "tooldec-serve")
SERVERS = ("llama-server", "tooldec-serve")
"""The systems that run as an HTTP server driven by the official ``openai`` client."""
SERVER = _ROOT / ".cache" / "llama-server" / "llama-server"
COLUMNS = ["model", "system", "n", "calls_made", "calls_parsed", "broken", "answers_with_broken", "invalid",
           "ast_accuracy", *[f"ast_{c}" for c in CATEGORIES[:-1]], "irrelevance_accuracy", "tokens_per_second",
           "errors"]


def requests(data: Path, limit: int | None, categories: list[str]) -> list[Request]:
    """The first ``limit`` items of each category."""
    out: list[Request] = []
    for category in categories:
        items = list(bfcl_items(category, data))[:limit]
        out += [request(item, category) for item in items]
    return out


def _done(path: Path) -> set[str]:
    if not path.exists():
        return set()
    return {json.loads(line)["id"] for line in path.read_text().splitlines() if line.strip()}


def _threads() -> int:
    return int(os.environ.get("TOOLDEC_THREADS", "0")) or 1


# -- systems ------------------------------------------------------------------------------------

def in_process(model: str, system: str, todo: list[Request], max_tokens: int) -> Iterator[dict[str, Any]]:
    """tooldec or unconstrained: the project's own loop on llama-cpp-python."""
    session = _session(model)
    dialect = Hermes()
    for req in todo:
        row: dict[str, Any] = {"id": req.id, "category": req.category}
        try:
            tools = req.toolset()
            decoder = session.decoder("tooldec" if system == "tooldec" else "baseline", tools, dialect)
            prompt = session.chat(req.messages, tools=tools, dialect=dialect)
            once = session.once(decoder, "tooldec" if system == "tooldec" else "baseline", prompt,
                                max_new_tokens=max_tokens, tool_choice="auto")
        except Exception as error:  # recorded per item, counted in the table
            yield {**row, "error": f"{type(error).__name__}: {error}", "text": "", "tokens": 0, "seconds": 0.0,
                   "prompt_tokens": 0, **_FAILED}
            continue
        yield {**row, **count_answer(req, dialect, tools, once.text), "text": once.text, "tokens": once.tokens,
               "seconds": once.seconds, "prompt_tokens": once.prompt_tokens}


_SESSIONS: dict[str, Any] = {}


def _session(model: str) -> Any:
    from benchmarks.paper.experiments.common import Session

    if model not in _SESSIONS:
        _SESSIONS.clear()  # one model in memory at a time
        _SESSIONS[model] = Session(model, backend="llamacpp")
    return _SESSIONS[model]


_FAILED: dict[str, Any] = {"calls_made": 0, "calls_parsed": 0, "broken": 0, "invalid": 0, "correct": False,
                           "calls": [], "broken_text": []}
"""An item the system failed on (an exception, an HTTP error): counted wrong, and in ``errors``."""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def server_argv(system: str, gguf: Path, port: int, context: int) -> list[str]:
    """The command that serves ``gguf`` on 127.0.0.1:``port``: ``llama-server --jinja`` (one slot), or
    ``tooldec serve`` with its defaults (the call format detected from the GGUF's chat template)."""
    threads = str(_threads())
    if system == "tooldec-serve":
        return [str(Path(sys.executable).with_name("tooldec")), "serve", "--model", str(gguf), "--host", "127.0.0.1",
                "--port", str(port), "--n-ctx", str(context), "--threads", threads]
    if not SERVER.exists():
        raise SystemExit(f"no llama-server at {SERVER}: run `make llama-server` first")
    return [str(SERVER), "-m", str(gguf), "--jinja", "--host", "127.0.0.1", "--port", str(port), "-c", str(context),
            "-np", "1", "-t", threads, "-tb", threads, "--seed", "0"]


def start_server(system: str, gguf: Path, log: Path, context: int) -> tuple[subprocess.Popen[bytes], str]:
    """``system`` (:func:`server_argv`) on ``gguf`` at 127.0.0.1; waits for /health."""
    port = _free_port()
    argv = server_argv(system, gguf, port, context)
    process = subprocess.Popen(argv, stdout=log.open("wb"), stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    end = time.monotonic() + 600
    while time.monotonic() < end:
        if process.poll() is not None:
            raise RuntimeError(f"{system} exited: {log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(f"{url}/health", timeout=2) as reply:
                if reply.status == 200:
                    return process, url
        except OSError:
            time.sleep(1)
    process.terminate()
    raise RuntimeError(f"{system} did not start: {log.read_text()[-3000:]}")


def served(system: str, gguf: Path, todo: list[Request], max_tokens: int, log: Path,
           context: int) -> Iterator[dict[str, Any]]:
    """``llama-server --jinja`` or ``tooldec serve``, driven with the official openai client; call-like
    text a client gets in ``content`` counts as broken."""
    import openai

    dialect = Hermes()
    process, url = start_server(system, gguf, log, context)
    try:
        client = openai.OpenAI(base_url=f"{url}/v1", api_key="none", max_retries=0, timeout=3600)
        for req in todo:
            row: dict[str, Any] = {"id": req.id, "category": req.category}
            start = time.perf_counter()
            try:
                reply = client.chat.completions.create(
                    model=gguf.stem, messages=req.messages, tools=req.openai_tools(),  # type: ignore[arg-type]
                    tool_choice="auto", temperature=0.0, max_tokens=max_tokens, seed=0)
            except openai.APIError as error:
                yield {**row, "error": f"{type(error).__name__}: {error}", "text": "", "tokens": 0,
                       "seconds": time.perf_counter() - start, "prompt_tokens": 0, **_FAILED}
                continue
            seconds = time.perf_counter() - start
            message = reply.choices[0].message
            text = message.content or ""
            tool_calls = [c.model_dump() for c in message.tool_calls or []]
            usage = reply.usage
            yield {**row, **count_answer(req, dialect, req.toolset(), text, tool_calls), "text": text,
                   "tool_calls": tool_calls, "finish_reason": reply.choices[0].finish_reason,
                   "tokens": usage.completion_tokens if usage else 0, "seconds": seconds,
                   "prompt_tokens": usage.prompt_tokens if usage else 0}
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()


# -- run and report -------------------------------------------------------------------------------

def run(args: argparse.Namespace) -> None:
    from tqdm import tqdm  # type: ignore[import-untyped]

    from benchmarks.paper.experiments.common import resolve_model

    data = data_dir(args.data)
    all_requests = requests(data, args.limit, args.category or list(CATEGORIES))
    for model in args.model:
        folder = args.out / model
        folder.mkdir(parents=True, exist_ok=True)
        gguf = resolve_model(model)
        setup = {"model": model, "file": gguf.name, "max_tokens": args.max_tokens, "limit": args.limit,
                 "threads": _threads(), "cores": os.cpu_count(), "machine": platform.machine(),
                 "data": str(data), "decoding": "greedy", "tool_choice": "auto"}
        if SERVER.exists():
            setup["llama_server"] = subprocess.run([str(SERVER), "--version"], capture_output=True, text=True,
                                                   check=False).stderr.strip().splitlines()[-2:]
        (folder / "setup.json").write_text(json.dumps(setup, indent=2) + "\n")
        for system in args.system or SYSTEMS:
            path = folder / f"{system}.jsonl"
            done = _done(path)
            todo = [r for r in all_requests if r.id not in done]
            if not todo:
                continue
            rows: Iterator[dict[str, Any]]
            if system in SERVERS:
                _SESSIONS.clear()  # one model process at a time
                rows = served(system, gguf, todo, args.max_tokens, folder / f"{system}.log", args.context)
            else:
                rows = in_process(model, system, todo, args.max_tokens)
            with path.open("a") as out:
                for row in tqdm(rows, total=len(todo), desc=f"{model} {system}", unit="item", dynamic_ncols=True):
                    out.write(json.dumps(row, ensure_ascii=False, default=str) + "\n")
                    out.flush()
    _SESSIONS.clear()


def recount(path: Path, rows: list[dict[str, Any]], data: Path) -> list[dict[str, Any]]:
    """Count every recorded answer again with the current ``Hermes().scan`` (the texts and the
    server's ``tool_calls`` are in the records), and write the records back."""
    by_id = {r.id: r for r in requests(data, None, list(CATEGORIES))}
    dialect = Hermes()
    server = path.stem in SERVERS
    out = []
    for row in rows:
        if not row.get("error"):
            req = by_id[row["id"]]
            tool_calls = (row.get("tool_calls") or []) if server else None
            row = {**row, **count_answer(req, dialect, req.toolset(), row["text"], tool_calls)}
        out.append(row)
    path.write_text("".join(json.dumps(r, ensure_ascii=False, default=str) + "\n" for r in out))
    return out


def report(out: Path, data: Path | None = None, *, recounted: bool = False, limit: int | None = None,
           common: bool = False) -> str:
    """The table over every ``OUT/<model>/<system>.jsonl``; writes ``auto_mode.md`` and ``auto_mode.png``.

    Args:
        out: The records' folder.
        data: The BFCL data (needed by ``recounted`` and ``limit``).
        recounted: Count every record again first (:func:`recount`).
        limit: Only the first ``limit`` items of each category (the table is printed, not written).
        common: Per model, only the items every system of that model has a record for, so that the
            systems are compared on the same questions when a run stopped part-way.
    """
    keep = None if limit is None or data is None else {r.id for r in requests(data, limit, list(CATEGORIES))}
    table_rows = []
    for folder in sorted(p for p in out.iterdir() if p.is_dir()):
        records: dict[str, list[dict[str, Any]]] = {}
        for system in SYSTEMS:
            path = folder / f"{system}.jsonl"
            if not path.exists():
                continue
            rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
            if recounted and data is not None:
                rows = recount(path, rows, data)
            if keep is not None:
                rows = [r for r in rows if r["id"] in keep]
            records[system] = rows
        shared = set.intersection(*({r["id"] for r in rows} for rows in records.values())) if records else set()
        for system, rows in records.items():
            if common:
                rows = [r for r in rows if r["id"] in shared]
            if rows:
                table_rows.append({"model": folder.name, "system": system, **summarize(rows),
                                   "errors": sum(1 for r in rows if r.get("error"))})
    for row in table_rows:
        for key in ("n", "calls_made", "calls_parsed", "broken", "answers_with_broken", "invalid"):
            row[key] = int(row[key])
    table = markdown_table(table_rows, COLUMNS)
    if keep is None:
        (out / "auto_mode.md").write_text(table + "\n")
        if table_rows:
            plot(table_rows, out / "auto_mode.png")
    return table


def compare(out: Path) -> str:
    """What the text of RESULTS says about the answers, per model, on the items every system has
    answered (as ``--common``): how often tooldec and the unconstrained loop wrote the same text,
    where one is right and the other not, irrelevance questions with a call made, tooldec's right
    answers in the call categories."""
    lines = []
    for folder in sorted(p for p in out.iterdir() if p.is_dir()):
        records = {system: {r["id"]: r for r in map(json.loads, (folder / f"{system}.jsonl").read_text().splitlines())}
                   for system in SYSTEMS if (folder / f"{system}.jsonl").exists()}
        if not {"tooldec", "unconstrained"} <= set(records):
            continue
        shared = sorted(set.intersection(*(set(rows) for rows in records.values())))
        ours, free = records["tooldec"], records["unconstrained"]
        same = sum(1 for i in shared if ours[i]["text"] == free[i]["text"])
        better = [i for i in shared if ours[i]["correct"] and not free[i]["correct"]]
        worse = [i for i in shared if free[i]["correct"] and not ours[i]["correct"]]
        irrelevant = [i for i in shared if ours[i]["category"] == "irrelevance"]
        called = {system: sum(1 for i in irrelevant if rows[i]["calls_made"]) for system, rows in records.items()}
        right = [i for i in shared if ours[i]["category"] != "irrelevance" and ours[i]["correct"]]
        lines += [f"{folder.name}: {len(shared)} items; tooldec and unconstrained wrote the same text in {same}",
                  f"  tooldec right, unconstrained not: {len(better)} {better}",
                  f"  unconstrained right, tooldec not: {len(worse)} {worse}",
                  f"  irrelevance questions with a call made (of {len(irrelevant)}): {called}",
                  f"  tooldec right in the call categories: {len(right)}" + (f" {right}" if len(right) <= 8 else "")]
    return "\n".join(lines)


def plot(rows: list[dict[str, Any]], path: Path) -> None:
    """Broken calls, AST accuracy, irrelevance accuracy and tokens/s: bars per model, one colour per system."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    metrics = [("broken", "broken calls"), ("ast_accuracy", "AST accuracy (call categories)"),
               ("irrelevance_accuracy", "irrelevance accuracy"), ("tokens_per_second", "tokens / s")]
    models = list(dict.fromkeys(r["model"] for r in rows))
    width = 0.8 / len(SYSTEMS)
    fig, axes = plt.subplots(1, len(metrics), figsize=(4.2 * len(metrics), 3.6))
    for ax, (metric, title) in zip(axes, metrics):
        for j, system in enumerate(SYSTEMS):
            values = [next((r[metric] for r in rows if r["model"] == m and r["system"] == system), float("nan"))
                      for m in models]
            ax.bar([i + j * width for i in range(len(models))], values, width, label=system)
        ax.set_xticks([i + width for i in range(len(models))], models)
        ax.set_title(title, fontsize=10)
        if "accuracy" in metric:
            ax.set_ylim(0, 1.05)
    n = ", ".join(f"{r['model']}/{r['system']}={r['n']}" for r in rows)
    fig.suptitle(f"BFCL v4, tool_choice=auto, greedy (items: {n})", fontsize=8)
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", action="append", default=[],
                        help="smollm2, qwen or a .gguf path (repeatable; run in this order)")
    parser.add_argument("--system", action="append", choices=SYSTEMS, help="default: all four")
    parser.add_argument("--category", action="append", choices=CATEGORIES, help="default: all five")
    parser.add_argument("--limit", type=int, default=20,
                        help="items per category (default 20); with --report: table of the first N only")
    parser.add_argument("--max-tokens", type=int, default=256, help="new tokens per answer, every system")
    parser.add_argument("--context", type=int, default=8192, help="llama-server context (the backend's default)")
    parser.add_argument("--data", type=Path, default=None)
    parser.add_argument("--out", type=Path, default=Path("runs/auto_mode"))
    parser.add_argument("--report", action="store_true", help="only the table and PNG from the records")
    parser.add_argument("--recount", action="store_true",
                        help="with --report: count every recorded answer again with the current scan")
    parser.add_argument("--common", action="store_true",
                        help="table of the items every system of a model has answered (the same questions)")
    parser.add_argument("--compare", action="store_true",
                        help="with --report: also the answers compared on the common items (RESULTS' text)")
    args = parser.parse_args()
    if not args.report:
        run(args)
    subset = args.report and "--limit" in sys.argv  # --report --limit N: the first N items only
    data = data_dir(args.data) if args.recount or subset else None
    print(report(args.out, data, recounted=args.recount, limit=args.limit if subset else None, common=args.common))
    if args.compare:
        print(compare(args.out))
    print(f"results in {args.out}")


if __name__ == "__main__":
    main()
