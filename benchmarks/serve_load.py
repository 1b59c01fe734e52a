"""``tooldec serve`` or ``llama-server`` under concurrent clients: tokens/s, latency, time to first token.

Run from the repository root (``make qwen`` first for Qwen, ``make llama-server`` for llama-server)::

    python benchmarks/serve_load.py --model qwen --parallel 1 4 8 --clients 1 4 8 16 --requests 16
    python benchmarks/serve_load.py --model smollm2 --parallel 1 4 --clients 1 4 --requests 8
    python benchmarks/serve_load.py --model qwen --parallel 1 4 --clients 1 8 --requests 16 --jump-forward both
    python benchmarks/serve_load.py --model qwen --engine tooldec llama-server --parallel 4 --clients 4 8

For each ``--engine`` and ``--parallel`` value a server subprocess on 127.0.0.1 with N slots
(context ``--slot-context`` times N: every slot holds the same), then per ``--clients`` value C: the
same ``--requests`` BFCL questions (``simple_python`` and ``multiple`` alternating, their functions
as tools, a call required, greedy, streamed with the official ``openai`` client), C clients each
taking the next question until none is left. A warm-up pass first sends every question once
(tool lists compiled, not counted; ``--no-warm-up``: none). Printed per cell: total completion tokens / wall time,
answers / wall time (the fair measure where an engine's answers run on past their call),
p50 and p99 latency and time to first token (first delta with content or a call), requests lost
(an error or no end), invalid calls (a call that does not parse or fails its schema, or none
where one is required), and how many greedy answers differ from the same server's answer at one
client (a batch's kernels change the last bits of the logits: ``tooldec.backends.llamabatch``).
``--jump-forward both`` runs every cell without and then with ``tooldec serve --jump-forward`` and
counts the answers that differ between the two (tooldec only). tooldec's rows also give, per
answer, the batches llama.cpp evaluated (``llama_decode`` calls: prompt chunks, tokens and drafts;
with several slots each is shared by the answers in it) and the draft tokens the model confirmed,
from ``/metrics``.

``--engine llama-server`` runs the same cells against ``llama-server`` built from the llama.cpp
that our backend links (``scripts/build_llama_server.sh``), on the same GGUF, to see what
tooldec's masking and scheduling cost or gain against llama.cpp's own batching: ``llama-server
-m MODEL --jinja -np N -c slot_context*N --threads T --threads-batch T``, plus what tooldec's
context does, so both run the same kernels: flash attention off (``-fa off``; llama-cpp-python's
default) and a KV cache split per slot (``--no-kv-unified``). The requests are the same (greedy,
``tool_choice: "required"``). With ``--jinja`` llama-server honours ``required`` with a grammar
that lets any text without ``<tool_call>`` come first and then asks for at least one call: the
answer cannot end without a call, but it can run out of ``max_tokens`` before one (Qwen 2.5 Coder
0.5B writes its call as a markdown JSON block, then newlines up to the budget); such answers
count as invalid calls, and their tokens count in tokens/s as every engine's do. Its prompt cache
settings are its defaults (``--cache-ram``, ``--cache-reuse``, ``--cache-idle-slots``,
``--slot-prompt-similarity``), which the header prints from its ``--help`` and each jsonl row keeps.

``--prompt-cache-mib 0 1024`` runs every cell once per bound: ``tooldec serve --prompt-cache-mib``
and llama-server's ``--cache-ram`` (0: off). The serve rows count the prompts that started from
the cache and the tokens it gave (from ``/metrics``). The questions repeat between the warm-up
and the cells, as a client's tool list and system prompt repeat on every turn, so with the cache
on the cells show a server whose prompts are mostly cached; with it off, one whose slots hold only
their last prompt.

The server runs in a process group of its own, ended on the way out (an exception, SIGINT,
SIGTERM or SIGHUP) and, on Linux, by the kernel should this process die unhandled (SIGKILL), so a
killed benchmark leaves no server holding the cores.
"""

from __future__ import annotations

import argparse
import asyncio
import ctypes
import json
import os
import platform
import re
import signal
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from types import FrameType
from typing import Any

_ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(_ROOT / "src"), str(_ROOT)]

from benchmarks.paper.datasets import data_dir  # noqa: E402
from benchmarks.serve_vs_run import requests  # noqa: E402

MODELS = {"qwen": _ROOT / ".cache/models/qwen2.5-coder-0.5b-instruct/qwen2.5-coder-0.5b-instruct-q4.gguf"}
LLAMA_SERVER = _ROOT / ".cache/llama-server/llama-server"
PROMPT_CACHE_OPTIONS = ("--cache-ram", "--cache-reuse", "--cache-idle-slots", "--slot-prompt-similarity")


def model_path(name: str) -> Path:
    if name == "smollm2":
        from tooldec.models import smollm2_gguf_path

        return Path(smollm2_gguf_path())
    return MODELS.get(name, Path(name))


def command(engine: str, model: Path, port: int, parallel: int, threads: int, slot_context: int,
            jump_forward: bool, binary: Path, cache_mib: int | None = None) -> list[str]:
    """The server's command line: the same model, slots, context per slot and threads for both
    engines, and the same prompt cache bound where ``cache_mib`` is given (``None``: each its own)."""
    if engine == "llama-server":
        return [str(binary), "-m", str(model), "--jinja", "-np", str(parallel), "-c", str(slot_context * parallel),
                "--threads", str(threads), "--threads-batch", str(threads), "-fa", "off", "--no-kv-unified",
                "--host", "127.0.0.1", "--port", str(port), *([] if cache_mib is None else ["--cache-ram", str(cache_mib)])]
    return [sys.executable, "-m", "tooldec.cli", "serve", "--model", str(model), "--port", str(port),
            "--threads", str(threads), "--n-ctx", str(slot_context * parallel), "--parallel", str(parallel),
            "--jump-forward" if jump_forward else "--no-jump-forward",
            *([] if cache_mib is None else ["--prompt-cache-mib", str(cache_mib)])]


COUNTS = ("tooldec_prompt_cache_hits_total", "tooldec_prompt_cache_tokens_restored_total", "tooldec_decodes_total",
          "tooldec_tokens_forced_total")


def server_counts(url: str) -> dict[str, int]:
    """tooldec serve's prompt cache hits and tokens restored, decodes and tokens forced so far (from ``/metrics``)."""
    with urllib.request.urlopen(f"{url}/metrics") as answer:
        samples = dict(line.rsplit(" ", 1) for line in answer.read().decode().splitlines() if not line.startswith("#"))
    return {name: int(float(samples.get(name, 0))) for name in COUNTS}


def prompt_cache_defaults(binary: Path) -> str:
    """llama-server's prompt cache defaults as its ``--help`` states them, e.g. ``--cache-ram 8192``."""
    text = subprocess.run([str(binary), "--help"], capture_output=True, text=True, timeout=60).stdout
    found = []
    for option in PROMPT_CACHE_OPTIONS:
        match = re.search(rf"{re.escape(option)}\b[^\n]*(?:\n {{10,}}[^\n]*)*?default: ([^,)]+)", text)
        found.append(f"{option} {match.group(1).strip() if match else '?'}")
    return " ".join(found)


def _die_with_parent() -> None:
    """In the child before exec: SIGTERM from the kernel when the benchmark dies, even by SIGKILL."""
    if sys.platform == "linux":
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def start_server(argv: list[str], log: Path) -> tuple[subprocess.Popen[bytes], str]:
    """``argv`` (its ``--port`` set by :func:`free_port`) in a process group of its own, once its
    ``/health`` answers 200 (llama-server answers 503 while it loads)."""
    url = f"http://127.0.0.1:{argv[argv.index('--port') + 1]}"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(_ROOT / "src"), os.environ.get("PYTHONPATH", "")])}
    process = subprocess.Popen(argv, stdout=log.open("wb"), stderr=subprocess.STDOUT, env=env,
                               start_new_session=True, preexec_fn=_die_with_parent)
    try:
        end = time.monotonic() + 600
        while time.monotonic() < end:
            if process.poll() is not None:
                raise SystemExit(f"{argv[0]} exited:\n{log.read_text()[-3000:]}")
            try:
                with urllib.request.urlopen(f"{url}/health", timeout=2) as answer:
                    if answer.status == 200:
                        return process, url
            except OSError:
                time.sleep(0.5)
        raise SystemExit(f"{argv[0]} did not start:\n{log.read_text()[-3000:]}")
    except BaseException:
        stop(process)
        raise


def stop(process: subprocess.Popen[bytes]) -> None:
    """End the server's whole process group: SIGTERM, then SIGKILL after 30 s."""
    for sig, wait in ((signal.SIGTERM, 30.0), (signal.SIGKILL, 10.0)):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            pass
        try:
            process.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


def free_port() -> int:
    """A port free on 127.0.0.1 now, for the server to bind a moment later."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _exit_on_signal(signum: int, frame: FrameType | None) -> None:
    """SIGTERM and SIGHUP leave through ``finally`` blocks (which end the server) as SIGINT does."""
    raise SystemExit(128 + signum)


def invalid(body: dict[str, Any], calls: list[tuple[str, str]]) -> int:
    """Calls that do not parse or fail their tool's schema, plus one if a required call is missing."""
    import jsonschema

    schemas = {t["function"]["name"]: t["function"]["parameters"] for t in body["tools"]}
    bad = int(body["tool_choice"] == "required" and not calls)
    for name, arguments in calls:
        try:
            jsonschema.validate(json.loads(arguments), schemas[name])
        except (KeyError, ValueError, jsonschema.ValidationError):
            bad += 1
    return bad


async def one(client: Any, model_id: str, body: dict[str, Any]) -> dict[str, Any]:
    start = time.perf_counter()
    first = None
    content, calls, tokens, finish = "", {}, 0, None
    try:
        answer = await client.chat.completions.create(**body, model=model_id, stream=True,
                                                      stream_options={"include_usage": True})
        async for part in answer:
            if part.usage is not None:
                tokens = part.usage.completion_tokens
            for choice in part.choices:
                delta = choice.delta
                if (delta.content or delta.tool_calls) and first is None:
                    first = time.perf_counter() - start
                content += delta.content or ""
                for call in delta.tool_calls or []:
                    name, arguments = calls.get(call.index, ("", ""))
                    calls[call.index] = (name + (call.function.name or ""), arguments + (call.function.arguments or ""))
                finish = choice.finish_reason or finish
    except Exception as error:  # a lost request, counted
        return {"lost": True, "error": f"{type(error).__name__}: {error}"}
    listed = [calls[k] for k in sorted(calls)]
    return {"lost": finish is None, "seconds": time.perf_counter() - start, "ttft": first or 0.0, "tokens": tokens,
            "invalid": invalid(body, listed), "answer": json.dumps([listed, content])}


async def cell(url: str, model_id: str, bodies: list[dict[str, Any]], clients: int) -> tuple[float, list[dict[str, Any]]]:
    import openai

    queue = list(enumerate(bodies))
    results: list[dict[str, Any]] = [{} for _ in bodies]
    async with openai.AsyncOpenAI(base_url=f"{url}/v1", api_key="none", max_retries=0, timeout=1200) as client:
        async def worker() -> None:
            while queue:
                index, body = queue.pop(0)
                results[index] = await one(client, model_id, body)

        start = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(clients)))
        return time.perf_counter() - start, results


def per(row: dict[str, Any], key: str) -> str:
    """A per-answer figure of tooldec's row, '-' for llama-server's."""
    return f"{row[key]:.1f}" if key in row else "-"


def quantile(values: list[float], q: float) -> float:
    if len(values) < 2:
        return values[0] if values else float("nan")
    return statistics.quantiles(values, n=100, method="inclusive")[round(q * 100) - 1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="qwen", help="qwen, smollm2 or a .gguf path")
    parser.add_argument("--engine", nargs="+", choices=("tooldec", "llama-server"), default=["tooldec"],
                        help="the servers to load, each in turn")
    parser.add_argument("--llama-server", type=Path, default=LLAMA_SERVER, help="llama-server binary")
    parser.add_argument("--parallel", nargs="+", type=int, default=[1, 4, 8])
    parser.add_argument("--clients", nargs="+", type=int, default=[1, 4, 8, 16])
    parser.add_argument("--requests", type=int, default=16, help="BFCL questions per cell")
    parser.add_argument("--max-tokens", type=int, default=128)
    parser.add_argument("--slot-context", type=int, default=2048, help="positions per slot")
    parser.add_argument("--threads", type=int, default=int(os.environ.get("TOOLDEC_THREADS", "0")) or os.cpu_count() or 1)
    parser.add_argument("--data", type=Path, default=None, help="benchmark data (default: TOOLDEC_DATA or ../shared/data)")
    parser.add_argument("--no-warm-up", dest="warm_up", action="store_false",
                        help="no warm-up pass: the first cell also compiles each tool list")
    parser.add_argument("--jump-forward", choices=("off", "on", "both"), default="off",
                        help="tooldec serve with --jump-forward or --no-jump-forward, or each cell both ways")
    parser.add_argument("--prompt-cache-mib", nargs="+", type=int, default=[None],
                        help="prompt cache bounds to run each server with (tooldec serve --prompt-cache-mib, "
                             "llama-server --cache-ram; 0: off; default: each server's own)")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/serve_load.jsonl"))
    args = parser.parse_args()
    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, _exit_on_signal)
    model = model_path(args.model)
    bodies = [body for _, body in requests(data_dir(args.data), args.requests, args.max_tokens)]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    cache = ""
    if "llama-server" in args.engine:
        if not os.access(args.llama_server, os.X_OK):
            raise SystemExit(f"no llama-server at {args.llama_server}: make llama-server")
        cache = prompt_cache_defaults(args.llama_server)
    print(f"model {model.name}, {args.requests} BFCL questions, max_tokens {args.max_tokens}, "
          f"{args.threads} threads, {platform.processor() or platform.machine()}, {os.cpu_count()} cores"
          + (f"; llama-server prompt cache defaults: {cache}" if cache else ""))
    print("| engine | parallel | prompt cache (MiB) | jump-forward | clients | tokens/s | answers/s | p50 latency (s) | p99 latency (s) "
          "| p50 TTFT (s) | p99 TTFT (s) | lost | invalid calls | answers unlike 1 client | answers unlike without jump-forward "
          "| prompts from the cache | decodes per answer | tokens per answer | forced tokens per answer |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    jumps = {"off": [False], "on": [True], "both": [False, True]}[args.jump_forward]
    # tooldec's answers without jump-forward, by (parallel, prompt cache, clients)
    plain: dict[tuple[int, int | None, int], list[str]] = {}
    cells = [(engine, p, c, j) for engine in args.engine for p in args.parallel for c in args.prompt_cache_mib
             for j in (jumps if engine == "tooldec" else [False])]
    for engine, parallel, cache_mib, jump in cells:
        tooldec = engine == "tooldec"
        log = args.out.with_suffix(f".{engine}.p{parallel}{'' if cache_mib is None else f'.c{cache_mib}'}"
                                   f"{'.jf' if jump else ''}.log")
        argv = command(engine, model, free_port(), parallel, args.threads, args.slot_context, jump, args.llama_server,
                       cache_mib)
        process, url = start_server(argv, log)
        try:
            model_id = json.loads(urllib.request.urlopen(f"{url}/v1/models").read())["data"][0]["id"]
            if args.warm_up:  # tool lists compiled, prompts cached where slots hold them
                asyncio.run(cell(url, model_id, bodies, max(args.clients)))
            alone: list[str] | None = None
            for clients in args.clients:
                counts = server_counts(url) if tooldec else {}
                wall, results = asyncio.run(cell(url, model_id, bodies, clients))
                counts = {name: value - counts[name] for name, value in server_counts(url).items()} if tooldec else {}
                kept = [r for r in results if not r["lost"]]
                answers = [r.get("answer", "") for r in results]
                alone = answers if alone is None else alone
                if tooldec and not jump:
                    plain[parallel, cache_mib, clients] = answers
                before = plain.get((parallel, cache_mib, clients))
                row = {"engine": engine, "model": model.name, "parallel": parallel, "prompt_cache_mib": cache_mib,
                       "jump_forward": jump if tooldec else None, "clients": clients, "requests": len(bodies),
                       "tokens_per_s": sum(r["tokens"] for r in kept) / wall, "answers_per_s": len(kept) / wall,
                       "latency_p50": quantile([r["seconds"] for r in kept], 0.5),
                       "latency_p99": quantile([r["seconds"] for r in kept], 0.99),
                       "ttft_p50": quantile([r["ttft"] for r in kept], 0.5),
                       "ttft_p99": quantile([r["ttft"] for r in kept], 0.99),
                       "lost": len(results) - len(kept), "invalid": sum(r["invalid"] for r in kept),
                       "unlike_alone": sum(a != b for a, b in zip(answers, alone)),
                       "unlike_no_jump": sum(a != b for a, b in zip(answers, before)) if jump and before else None}
                if tooldec:
                    row["prompt_cache_hits"] = counts["tooldec_prompt_cache_hits_total"]
                    row["prompt_tokens_restored"] = counts["tooldec_prompt_cache_tokens_restored_total"]
                    row["decodes_per_answer"] = counts["tooldec_decodes_total"] / max(len(kept), 1)
                    row["forced_per_answer"] = counts["tooldec_tokens_forced_total"] / max(len(kept), 1)
                else:
                    row["prompt_cache"] = cache
                with args.out.open("a") as out:
                    out.write(json.dumps(row) + "\n")
                unlike = "" if row["unlike_no_jump"] is None else row["unlike_no_jump"]
                print(f"| {engine} | {parallel} | {'default' if cache_mib is None else cache_mib} | "
                      f"{('on' if jump else 'off') if tooldec else '-'} | {clients} | "
                      f"{row['tokens_per_s']:.1f} | {row['answers_per_s']:.2f} | {row['latency_p50']:.2f} | {row['latency_p99']:.2f} | "
                      f"{row['ttft_p50']:.2f} | {row['ttft_p99']:.2f} | {row['lost']} | {row['invalid']} | "
                      f"{row['unlike_alone']} | {unlike} | {row.get('prompt_cache_hits', '-')} | "
                      f"{per(row, 'decodes_per_answer')} | {sum(r['tokens'] for r in kept) / max(len(kept), 1):.1f} | "
                      f"{per(row, 'forced_per_answer')} |", flush=True)
        finally:
            stop(process)


if __name__ == "__main__":
    main()
