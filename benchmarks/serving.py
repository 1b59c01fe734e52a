"""Serving benchmark: vLLM + tooldec against vLLM's own tool calling, on SmolLM2 (CPU).

Run from the repository root after ``make setup`` and ``make vllm``::

    .venv/bin/python benchmarks/serving.py --out runs/serving          # runs every cell (long)
    .venv/bin/python benchmarks/serving.py --out runs/serving --report # table + PNG from the records

Work: BFCL ``simple_python`` and ``multiple`` questions; each request's ``tools`` holds the
question's own functions plus BFCL functions from other questions as distractors, to 13, 100 or
1,000 tools. Only the question's own functions are described in the prompt (the chat template's
``prompt_tools``): SmolLM2's 8,192-token context holds no 1,000 tool descriptions, and every
system sees the same prompt, so the cells differ only in how the tool list constrains the answer.
``new``: every request has a tool list never seen before (a fresh sample of distractors);
every system of a cell gets the same questions and lists (the cell's seed);
``repeated``: every request of the cell sends the same list. Requests are sent one at a time
(concurrency 1) or 16 at once, streamed, greedy, ``parallel_tool_calls=False``,
``--max-tokens`` tokens at most.

Systems, each a vLLM 0.32 OpenAI server (``--enforce-eager``, SmolLM2 converted by ``make vllm``,
the same chat template):

* ``tooldec-auto``, ``tooldec-required``: the tooldec logits processor and tool parser;
* ``xgrammar-auto``, ``xgrammar-required``: ``--tool-call-parser hermes --tool-strict-level
  parameter`` (XGrammar structural tags with the argument schemas);
* ``guidance-required``: hermes, ``tool_choice="required"`` as a JSON schema compiled by the
  guidance backend (``VLLM_ENFORCE_STRICT_TOOL_CALLING=0``, ``--structured-outputs-config
  '{"backend": "guidance"}'``);
* ``unconstrained-auto``: hermes, no constraint (the tooldec processor is installed in that venv
  and loaded through its entry point, idle for requests without tooldec arguments).

Per request: time to first token (the first streamed chunk), total latency, output tokens per
second after the first token, and the calls: valid (a tool of the request, arguments valid
against its schema) or invalid (unknown tool, bad arguments, or call-like text left in
``content``). Writes ``OUT/serving.jsonl`` (one line per request, appended; cells already there
are skipped), and with ``--report`` ``OUT/serving.md`` and ``OUT/serving.png``.
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import json
import os
import platform
import random
import re
import socket
import subprocess
import sys
import time
import urllib.request
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

_ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(_ROOT / "src"), str(_ROOT)]  # tooldec from this checkout, and benchmarks.paper

from benchmarks.paper.datasets import data_dir  # noqa: E402
from benchmarks.paper.experiments.bfcl import bfcl_schema  # noqa: E402
from tooldec.errors import ToolDecError  # noqa: E402
from tooldec.tools import ToolSet  # noqa: E402

MODEL_DIR = _ROOT / ".cache" / "models" / "smollm2-135m-instruct-hf"
SERVED = "smollm2"
SERVERS: dict[str, tuple[list[str], dict[str, str]]] = {
    "tooldec": (["--logits-processors", "tooldec.serving.vllm.processor:ToolDecLogitsProcessor",
                 "--enable-auto-tool-choice", "--tool-parser-plugin", "tooldec.serving.vllm.tool_parser",
                 "--tool-call-parser", "tooldec"], {}),
    "hermes": (["--enable-auto-tool-choice", "--tool-call-parser", "hermes"], {}),
    "xgrammar": (["--enable-auto-tool-choice", "--tool-call-parser", "hermes", "--tool-strict-level", "parameter"], {}),
    "guidance": (["--enable-auto-tool-choice", "--tool-call-parser", "hermes",
                  "--structured-outputs-config", '{"backend": "guidance"}'], {"VLLM_ENFORCE_STRICT_TOOL_CALLING": "0"}),
}
SYSTEMS: dict[str, tuple[str, str]] = {  # name -> (server, tool_choice)
    "tooldec-auto": ("tooldec", "auto"),
    "tooldec-required": ("tooldec", "required"),
    "xgrammar-auto": ("xgrammar", "auto"),
    "xgrammar-required": ("xgrammar", "required"),
    "guidance-required": ("guidance", "required"),
    "unconstrained-auto": ("hermes", "auto"),
}
_SAFE = re.compile(r"[^A-Za-z0-9_-]")
STEPS = "steps-tooldec.jsonl"
"""The tooldec server's per-step timings (``tooldec.serving.vllm.stats``), in ``--out``."""
STEPS_ENV = "TOOLDEC_VLLM_STATS"


# -- data ---------------------------------------------------------------------------------------

def _tool(fn: dict[str, Any], suffix: str = "") -> dict[str, Any]:
    name = _SAFE.sub("_", fn["name"])[: 60 - len(suffix)] + suffix
    return {"type": "function", "function": {"name": name, "description": fn.get("description", ""),
                                             "parameters": bfcl_schema(fn["parameters"])}}


def _accepted(tool: dict[str, Any]) -> bool:
    try:
        ToolSet([tool])
    except ToolDecError:
        return False
    return True


def load(data: Path) -> tuple[list[tuple[str, list[dict[str, Any]]]], list[dict[str, Any]]]:
    """Questions with their own tools, and the pool of distractor tools (every BFCL function, and
    renamed copies of them to pass 1,000 distinct names)."""
    questions, pool, seen = [], [], set()
    for subset in ("simple_python", "multiple", "parallel", "parallel_multiple", "irrelevance"):
        for line in (data / "bfcl" / f"BFCL_v4_{subset}.json").read_text().splitlines():
            item = json.loads(line)
            tools = [_tool(fn) for fn in item["function"]]
            if not all(_accepted(t) for t in tools) or len({t["function"]["name"] for t in tools}) < len(tools):
                continue
            if subset in ("simple_python", "multiple"):
                questions.append((item["question"][0][-1]["content"], tools))
            for tool in tools:
                if tool["function"]["name"] not in seen:
                    seen.add(tool["function"]["name"])
                    pool.append(tool)
    base = list(pool)
    for copy in range(1, 4):
        for tool in base:
            renamed = json.loads(json.dumps(tool))
            renamed["function"]["name"] = tool["function"]["name"][:56] + f"_v{copy}"
            if renamed["function"]["name"] not in seen:
                seen.add(renamed["function"]["name"])
                pool.append(renamed)
    return questions, pool


def tool_list(own: list[dict[str, Any]], pool: list[dict[str, Any]], size: int, rng: random.Random) -> list[dict[str, Any]]:
    names = {t["function"]["name"] for t in own}
    others = [t for t in rng.sample(pool, min(len(pool), size + len(own))) if t["function"]["name"] not in names]
    tools = own + others[: max(size - len(own), 0)]
    rng.shuffle(tools)
    return tools


# -- one server ---------------------------------------------------------------------------------

def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start(server: str, python: str, log: Path, extra_env: dict[str, str] | None = None) -> tuple[subprocess.Popen[bytes], str]:
    flags, env = SERVERS[server]
    env = {**env, **(extra_env or {})}
    port = _free_port()
    template = _ROOT / "src" / "tooldec" / "serving" / "vllm" / "chatml_tools.jinja"
    argv = [python, "-m", "vllm.entrypoints.openai.api_server", "--model", str(MODEL_DIR),
            "--served-model-name", SERVED, "--host", "127.0.0.1", "--port", str(port), "--max-model-len", "8192",
            "--max-num-seqs", "16", "--enforce-eager", "--kv-cache-memory-bytes", str(2 << 30),
            "--chat-template", str(template), "--seed", "0", *flags]
    process = subprocess.Popen(argv, stdout=log.open("wb"), stderr=subprocess.STDOUT, env={**os.environ, **env})
    url = f"http://127.0.0.1:{port}"
    end = time.monotonic() + 1200
    while time.monotonic() < end:
        if process.poll() is not None:
            raise RuntimeError(f"{server} server exited: {log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(f"{url}/health", timeout=2) as reply:
                if reply.status == 200:
                    return process, url
        except OSError:
            time.sleep(1)
    process.terminate()
    raise RuntimeError(f"{server} server did not start: {log.read_text()[-3000:]}")


def _check(calls: list[tuple[str, str]], content: str, tools: list[dict[str, Any]]) -> tuple[int, int]:
    """(valid calls, invalid calls): unknown tools, arguments that do not validate, and call-like
    text left in the content all count as invalid."""
    import jsonschema

    schemas = {t["function"]["name"]: t["function"]["parameters"] for t in tools}
    valid = invalid = 0
    for name, arguments in calls:
        try:
            jsonschema.validate(json.loads(arguments), schemas[name])
            valid += 1
        except (KeyError, ValueError, jsonschema.ValidationError, jsonschema.SchemaError):
            invalid += 1
    invalid += content.count("<tool_call>") + len(re.findall(r'\{\s*"name"\s*:', content))
    return valid, invalid


async def one(client: Any, question: str, own: list[dict[str, Any]], tools: list[dict[str, Any]], choice: str,
              max_tokens: int) -> dict[str, Any]:
    start_time = time.perf_counter()
    first = None
    content, calls, usage, error = "", {}, None, None
    try:
        stream = await client.chat.completions.create(
            model=SERVED, messages=[{"role": "user", "content": question}], tools=tools, tool_choice=choice,
            parallel_tool_calls=False, max_tokens=max_tokens, temperature=0, stream=True,
            stream_options={"include_usage": True}, extra_body={"chat_template_kwargs": {"prompt_tools": own}})
        async for chunk in stream:
            if first is None:
                first = time.perf_counter() - start_time
            if chunk.usage is not None:
                usage = chunk.usage.completion_tokens
            for choice_ in chunk.choices:
                content += choice_.delta.content or ""
                for part in choice_.delta.tool_calls or []:
                    entry = calls.setdefault(part.index, ["", ""])
                    if part.function and part.function.name:
                        entry[0] += part.function.name
                    if part.function and part.function.arguments:
                        entry[1] += part.function.arguments
    except Exception as exc:  # a failed request is a record, not a crash
        error = f"{type(exc).__name__}: {str(exc)[:300]}"
    total = time.perf_counter() - start_time
    pairs = [(n, a) for n, a in (calls[i] for i in sorted(calls))]
    valid, invalid = _check(pairs, content, tools) if error is None else (0, 0)
    tokens = usage or 0
    decode = total - (first or total)
    return {"ttft": first, "latency": total, "tokens": tokens,
            "tokens_per_s": (tokens - 1) / decode if tokens > 1 and decode > 0 else None,
            "calls": len(pairs), "valid": valid, "invalid": invalid, "error": error,
            "content": content[:400], "tool_calls": pairs}


def cell_seed(size: int, mode: str, concurrency: int) -> int:
    """A cell's seed: the same questions and tool lists for every system of the cell, so that
    systems are compared on the same requests (before 2026-11-25 it held the system's name too,
    so the ``new`` cells differed between systems)."""
    return zlib.crc32(f"{size}/{mode}/{concurrency}".encode())


def cell_requests(questions: list[tuple[str, list[dict[str, Any]]]], pool: list[dict[str, Any]], size: int,
                  mode: str, requests: int, seed: int) -> tuple[list[tuple[str, list[dict[str, Any]]]],
                                                                list[list[dict[str, Any]]]]:
    """A cell's questions and each one's tool list: ``repeated``, the first questions and one list
    for all; ``new``, a sample of questions and a list of its own for each."""
    rng = random.Random(seed)
    chosen = questions[:requests] if mode == "repeated" else rng.sample(questions, requests)
    if mode == "repeated":
        own_all = [t for _, own in chosen for t in own]
        unique = list({t["function"]["name"]: t for t in own_all}.values())
        return chosen, [tool_list(unique, pool, size, rng)] * requests
    return chosen, [tool_list(own, pool, size, random.Random(f"{seed}-{i}")) for i, (_, own) in enumerate(chosen)]


async def cell(url: str, system: str, size: int, mode: str, concurrency: int, requests: int, max_tokens: int,
               questions: list[tuple[str, list[dict[str, Any]]]], pool: list[dict[str, Any]], seed: int) -> list[dict[str, Any]]:
    import openai

    client = openai.AsyncOpenAI(base_url=f"{url}/v1", api_key="unused", max_retries=0, timeout=1800)
    chosen, lists = cell_requests(questions, pool, size, mode, requests, seed)
    choice = SYSTEMS[system][1]
    records = []
    for wave in range(0, requests, concurrency):
        batch = range(wave, min(wave + concurrency, requests))
        results = await asyncio.gather(*(one(client, chosen[i][0], chosen[i][1], lists[i], choice, max_tokens)
                                         for i in batch))
        records.extend(results)
    await client.close()
    return records


def run(args: argparse.Namespace) -> None:
    from tqdm import tqdm

    questions, pool = load(args.data)
    out = args.out / "serving.jsonl"
    done = set()
    if out.exists():
        for line in out.read_text().splitlines():
            r = json.loads(line)
            done.add((r["system"], r["size"], r["mode"], r["concurrency"]))
    systems = [s for s in args.systems]
    for server in dict.fromkeys(SYSTEMS[s][0] for s in systems):
        cells = [(s, size, mode, c) for s in systems if SYSTEMS[s][0] == server for c in args.concurrency
                 for size in args.sizes for mode in ("repeated", "new") if (s, size, mode, c) not in done]
        if not cells:
            continue
        log = args.out / f"server-{server}.log"
        print(f"starting the {server} server ({len(cells)} cells) ...", file=sys.stderr, flush=True)
        steps = {STEPS_ENV: str((args.out / STEPS).resolve())} if server == "tooldec" else {}
        process, url = start(server, args.vllm_python, log, steps)
        try:
            warm = asyncio.run(cell(url, cells[0][0], 13, "repeated", 1, 1, 16, questions, pool, seed=999))
            print(f"warm-up: {warm}", file=sys.stderr, flush=True)
            for system, size, mode, concurrency in tqdm(cells, desc=server):
                requests = args.requests if concurrency == 1 else max(args.requests, concurrency)
                seed = cell_seed(size, mode, concurrency)
                began = time.time()
                records = asyncio.run(cell(url, system, size, mode, concurrency, requests, args.max_tokens,
                                           questions, pool, seed))
                span = {"cell_start": began, "cell_end": time.time()}  # joins the processor's step log
                with out.open("a") as handle:
                    for record in records:
                        handle.write(json.dumps({"system": system, "size": size, "mode": mode,
                                                 "concurrency": concurrency, **record, **span}) + "\n")
        finally:
            process.terminate()
            process.wait(timeout=60)


# -- report -------------------------------------------------------------------------------------

def _median(values: Sequence[float]) -> float | None:
    values = sorted(values)
    return values[len(values) // 2] if values else None


def _step_table(path: Path, cells: dict[tuple[str, int, str, int], list[dict[str, Any]]]) -> list[str]:
    """What the processor itself took per step in each tooldec cell (its step log, joined to the
    cells by time): the engine thread's ``apply`` (waiting for masks + writing them) and the
    worker's mask work, against the step's length."""
    packed = path.with_name(path.name + ".gz")  # as kept under benchmarks/results
    if not path.exists() and not packed.exists():
        return []
    text = path.read_text() if path.exists() else gzip.decompress(packed.read_bytes()).decode()
    steps = [json.loads(line) for line in text.splitlines() if line.strip()]
    out = ["", ("The tooldec processor's own time per decoding step (`TOOLDEC_VLLM_STATS` step log, steps with "
                "constrained rows): *apply* runs on the engine's thread after the forward pass (waiting for "
                "the worker's masks, then writing them); *mask work* runs on the worker thread during the "
                "forward pass. Sums over the cell's steps."), "",
           ("| system | tools | list | concurrency | steps | step median (ms) | apply (ms/step) | of it waiting "
            "(ms/step) | mask work (ms/step) | apply / step time | (apply + work) / step time |"), "|" + " --- |" * 11]
    for key in sorted(cells, key=lambda k: (k[3], k[2], k[1], k[0])):
        rs = cells[key]
        if not key[0].startswith("tooldec") or "cell_start" not in rs[0]:
            continue
        lo, hi = rs[0]["cell_start"], rs[0]["cell_end"]
        inside = [s for s in steps if lo <= s["t"] <= hi and s["interval"] is not None]
        if not inside:
            continue
        total = sum(s["interval"] for s in inside)
        apply_s, wait_s, work_s = (sum(s[k] for s in inside) for k in ("apply", "wait", "work"))
        n = len(inside)
        out.append(f"| {key[0]} | {key[1]} | {key[2]} | {key[3]} | {n} | {1e3 * _median([s['interval'] for s in inside]):.1f} | "
                   f"{1e3 * apply_s / n:.2f} | {1e3 * wait_s / n:.2f} | {1e3 * work_s / n:.2f} | "
                   f"{apply_s / total:.2%} | {(apply_s + work_s) / total:.2%} |")
    return out


def report(args: argparse.Namespace) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [json.loads(line) for line in (args.out / "serving.jsonl").read_text().splitlines()]
    cells: dict[tuple[str, int, str, int], list[dict[str, Any]]] = {}
    for r in rows:
        cells.setdefault((r["system"], r["size"], r["mode"], r["concurrency"]), []).append(r)
    lines = [("| system | tools | list | concurrency | n | errors | TTFT median (s) | latency median (s) | "
              "tokens/s median | calls | invalid |"), "|" + " --- |" * 11]
    summary: dict[tuple[str, int, str, int], dict[str, Any]] = {}
    for key in sorted(cells, key=lambda k: (k[3], k[2], k[1], list(SYSTEMS).index(k[0]))):
        rs = cells[key]
        ok = [r for r in rs if r["error"] is None]
        s = {"ttft": _median([r["ttft"] for r in ok if r["ttft"] is not None]),
             "latency": _median([r["latency"] for r in ok]),
             "tps": _median([r["tokens_per_s"] for r in ok if r["tokens_per_s"]]),
             "calls": sum(r["valid"] + r["invalid"] for r in ok), "invalid": sum(r["invalid"] for r in ok),
             "errors": len(rs) - len(ok)}
        summary[key] = s

        def fmt(v: float | None) -> str:
            return "-" if v is None else f"{v:.2f}"

        lines.append(f"| {key[0]} | {key[1]} | {key[2]} | {key[3]} | {len(rs)} | {s['errors']} | {fmt(s['ttft'])} | "
                     f"{fmt(s['latency'])} | {fmt(s['tps'])} | {s['calls']} | {s['invalid']} |")
    lines += ["", ("tooldec against unconstrained vLLM (both auto, same prompts): median output tokens/s and time to "
                   "first token; *overhead* = how much longer a token takes with tooldec, and how much later the first."),
              "", ("| tools | list | concurrency | unconstrained tok/s | tooldec tok/s | per-token overhead | "
                   "unconstrained TTFT (s) | tooldec TTFT (s) | xgrammar-auto TTFT (s) | xgrammar / tooldec TTFT |"),
              "|" + " --- |" * 10]
    for (system, size, mode, conc), s in sorted(summary.items(), key=lambda kv: (kv[0][3], kv[0][2], kv[0][1])):
        base = summary.get(("unconstrained-auto", size, mode, conc))
        xg = summary.get(("xgrammar-auto", size, mode, conc), {})
        if system != "tooldec-auto" or base is None or not base["tps"] or not s["tps"]:
            continue
        ratio = "-" if not xg.get("ttft") or not s["ttft"] else f"{xg['ttft'] / s['ttft']:.1f}x"
        xg_ttft = "-" if not xg.get("ttft") else f"{xg['ttft']:.2f}"
        lines.append(f"| {size} | {mode} | {conc} | {base['tps']:.2f} | {s['tps']:.2f} | "
                     f"{base['tps'] / s['tps'] - 1:+.1%} | {base['ttft']:.2f} | {s['ttft']:.2f} | {xg_ttft} | {ratio} |")
    lines += _step_table(args.out / STEPS, cells)
    text = (f"Machine: {platform.machine()}, {os.cpu_count()} cores; model SmolLM2-135M-Instruct (bfloat16, vLLM 0.32 "
            f"CPU, --enforce-eager); data BFCL simple_python + multiple; {len(rows)} requests.\n\n" + "\n".join(lines))
    (args.out / "serving.md").write_text(text + "\n")
    print(text)
    sizes = sorted({k[1] for k in summary})
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    for ax, metric, label in ((axes[0], "ttft", "time to first token (s), new tool list, concurrency 1"),
                              (axes[1], "tps", "output tokens/s, repeated tool list, concurrency 1")):
        mode = "new" if metric == "ttft" else "repeated"
        for system in SYSTEMS:
            ys = [summary.get((system, n, mode, 1), {}).get(metric) for n in sizes]
            if any(y is not None for y in ys):
                ax.plot(sizes, [float("nan") if y is None else y for y in ys], marker="o", label=system)
        ax.set_xscale("log")
        ax.set_xlabel("tools in the request")
        ax.set_title(label, fontsize=10)
        if metric == "ttft":
            ax.set_yscale("log")
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=8)
    fig.suptitle("vLLM 0.32 on CPU, SmolLM2-135M: tooldec vs XGrammar, guidance, unconstrained (BFCL)", fontsize=11)
    fig.tight_layout()
    fig.savefig(args.out / "serving.png", dpi=120)


def parts(args: argparse.Namespace) -> None:
    """tooldec's own share of a request with a new tool list, in this process (no vLLM): what the
    API server does (parse ``vllm_xargs``, check the tools) and what the engine does before the
    first token (parse, compile, cursor, first mask), on the lists of the ``new`` cells at
    concurrency 1 (the run's seeds), SmolLM2's vocabulary, Hermes. Prints medians in ms. As in
    the run's server, ``required`` comes after ``auto`` on the same lists: its schemas are known."""
    import numpy as np

    from tooldec.dialects import Hermes
    from tooldec.models import smollm2_gguf_path
    from tooldec.serving.engine import Constraints
    from tooldec.serving.vllm.args import ToolDecArgs
    from tooldec.tokens import Vocabulary, from_gguf

    questions, pool = load(args.data)
    vocab = from_gguf(smollm2_gguf_path())
    engine = Constraints(vocab, Hermes())  # the processor's, made once at start-up
    checker = Constraints(Vocabulary.from_tokens([bytes([b]) for b in range(256)]), Hermes(), cache_size=1)
    bitmask = np.zeros((1, (vocab.size + 31) // 32), dtype=np.int32)
    print("| tools | choice | lists | API server: parse | check | engine: parse | compile | cursor and first mask | sum |")
    print("|---|---|---|---|---|---|---|---|---|")
    for size in args.sizes:
        for choice in ("auto", "required"):
            _, lists = cell_requests(questions, pool, size, "new", args.requests, cell_seed(size, "new", 1))
            times: list[list[float]] = []
            for tools in lists:
                text = json.dumps({"tools": tools, "tool_choice": choice, "parallel_tool_calls": False})
                marks = [time.perf_counter()]
                given = ToolDecArgs.parse(text)
                marks.append(time.perf_counter())
                checker.tools(given.tools)
                marks.append(time.perf_counter())
                parsed = ToolDecArgs.parse(text)
                marks.append(time.perf_counter())
                compiled = engine.compile(parsed.tools, parsed.key)
                marks.append(time.perf_counter())
                machine = engine.machine(compiled, tool_choice=choice, parallel_tool_calls=False)
                machine.check_budget(args.max_tokens)
                machine.fill_bitmask(bitmask, row=0)
                marks.append(time.perf_counter())
                times.append([(b - a) * 1e3 for a, b in zip(marks, marks[1:])])
            cols = [float(np.median([t[k] for t in times])) for k in range(5)]
            total = float(np.median([sum(t) for t in times]))
            print(f"| {size:,} | {choice} | {len(times)} | " + " | ".join(f"{c:.1f}" for c in cols) + f" | {total:.1f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=None, help="benchmark data (default: TOOLDEC_DATA or ../shared/data)")
    parser.add_argument("--out", type=Path, default=Path("runs/serving"))
    parser.add_argument("--vllm-python", default=str(_ROOT / ".venv-vllm" / "bin" / "python"))
    parser.add_argument("--systems", nargs="+", default=list(SYSTEMS), choices=list(SYSTEMS))
    parser.add_argument("--sizes", nargs="+", type=int, default=[13, 100, 1000])
    parser.add_argument("--concurrency", nargs="+", type=int, default=[1, 16])
    parser.add_argument("--requests", type=int, default=6, help="requests per cell at concurrency 1")
    parser.add_argument("--max-tokens", type=int, default=64)
    parser.add_argument("--report", action="store_true", help="only write the table and plot from the records")
    parser.add_argument("--parts", action="store_true",
                        help="only time tooldec's own share of a new-list request, in this process (no vLLM)")
    args = parser.parse_args()
    args.data = args.data or data_dir()
    if args.parts:
        parts(args)
        return
    args.out.mkdir(parents=True, exist_ok=True)
    if args.report:
        report(args)
    else:
        run(args)


if __name__ == "__main__":
    main()
