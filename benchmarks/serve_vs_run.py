"""``tooldec serve`` against ``tooldec run``'s loop: tokens per second and masking per token.

Run from the repository root (``make qwen`` first for Qwen)::

    python benchmarks/serve_vs_run.py --model qwen --items 20
    python benchmarks/serve_vs_run.py --model smollm2 --items 6 --max-tokens 64

Work: ``--items`` BFCL questions (``simple_python`` and ``multiple`` alternating, each with its own
functions as OpenAI tools), greedy, a call required, parallel calls off, up to ``--max-tokens``
new tokens, in two passes: the first with every tool list new to both paths (masks cold), the
second with the same lists again (masks cached). Both paths run on this machine, in this run, one
question after the other, each with ``--threads`` llama.cpp threads:

* serve: ``tooldec serve --model <gguf>`` in a subprocess on 127.0.0.1, each question one chat
  request; masking per token from the server's ``/health`` counters around the request;
* run: the same request prepared by the server's own code (``Service.prepare``: the same prompt
  ids, budget and grammar) in this process, then ``LlamaCppGenerator.generate``, the loop
  ``tooldec run`` drives; masking from its ``Generation``.

Tokens per second = completion tokens / the request's wall time (prompt preparation and
evaluation included: both paths keep their KV cache from one question to the next, so both
evaluate the same prompt tokens). Reported per pass and path: the median over questions of
tokens/s and of masking ms per token, and how many answers the two paths wrote alike (they take
the same greedy tokens). Writes ``OUT/serve_vs_run.jsonl`` (one line per answer, appended).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

_ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(_ROOT / "src"), str(_ROOT)]  # tooldec from this checkout, and benchmarks.paper

from benchmarks.paper.datasets import bfcl_items, data_dir  # noqa: E402
from benchmarks.paper.experiments.bfcl import bfcl_schema  # noqa: E402
from tooldec.dialects import Hermes  # noqa: E402

SUBSETS = ("simple_python", "multiple")


def requests(data: Path, count: int, max_tokens: int) -> list[tuple[str, dict[str, Any]]]:
    """``count`` BFCL questions as chat request bodies, alternating the subsets: (id, body)."""
    pools = [list(bfcl_items(subset, data)) for subset in SUBSETS]
    out = []
    for i in range(count):
        item = pools[i % len(pools)][i // len(pools)]
        tools = [{"type": "function", "function": {"name": f["name"], "description": f.get("description", ""),
                                                   "parameters": bfcl_schema(f["parameters"])}} for f in item["function"]]
        out.append((item["id"], {"messages": item["question"][0], "tools": tools, "tool_choice": "required",
                                 "parallel_tool_calls": False, "temperature": 0, "max_tokens": max_tokens}))
    return out


def http(url: str, body: dict[str, Any] | None = None) -> Any:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, headers={"content-type": "application/json"})
    with urllib.request.urlopen(request, timeout=600) as response:
        return json.loads(response.read())


class Server:
    """``tooldec serve`` in a subprocess, on a free port of 127.0.0.1."""

    def __init__(self, model: Path, threads: int, context: int, log: Path) -> None:
        import socket

        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(_ROOT / "src"), os.environ.get("PYTHONPATH", "")])}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tooldec.cli", "serve", "--model", str(model), "--port", str(port),
             "--threads", str(threads), "--n-ctx", str(context)], stdout=log.open("wb"), stderr=subprocess.STDOUT, env=env)
        end = time.monotonic() + 600
        while time.monotonic() < end:
            if self.process.poll() is not None:
                raise SystemExit(f"tooldec serve exited:\n{log.read_text()[-3000:]}")
            try:
                self.health()
                return
            except OSError:
                time.sleep(0.5)
        raise SystemExit(f"tooldec serve did not start:\n{log.read_text()[-3000:]}")

    def health(self) -> dict[str, Any]:
        return dict(http(f"{self.url}/health"))

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=60)


def serve_answer(server: Server, model_id: str, body: dict[str, Any]) -> dict[str, Any]:
    before = server.health()
    start = time.perf_counter()
    answer = http(f"{server.url}/v1/chat/completions", {**body, "model": model_id})
    seconds = time.perf_counter() - start
    after = server.health()
    message = answer["choices"][0]["message"]
    calls = [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in message.get("tool_calls") or []]
    return {"tokens": answer["usage"]["completion_tokens"], "seconds": seconds,
            "masking_seconds": after["masking_seconds"] - before["masking_seconds"],
            "answer": json.dumps([calls, message.get("content") or ""])}


def run_answer(service: Any, model_id: str, body: dict[str, Any]) -> dict[str, Any]:
    from tooldec.serving.protocol import parse_request

    generator = service.worker.generator
    start = time.perf_counter()
    job = service.prepare(parse_request({**body, "model": model_id}, model_id))
    grammar = service.constraints.compile(job.specs, job.key).grammar
    generation = generator.generate(job.prompt_ids, max_new_tokens=service.worker.budget(job), grammar=grammar,
                                    tool_choice=job.tool_choice, parallel_tool_calls=False, stop_after_call=Hermes())
    seconds = time.perf_counter() - start
    text = generator.vocab.decode([t for t in generation.ids if t not in generator.eos_ids]).decode("utf-8", "replace")
    calls = [(c.name, dict(c.arguments)) for c in Hermes().parse_calls(text)]
    return {"tokens": len(generation.ids), "seconds": seconds, "masking_seconds": generation.masking_seconds,
            "checked_steps": generation.checked_steps, "answer": json.dumps([calls, "" if calls else text])}


def summarize(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for pass_ in sorted({r["pass"] for r in rows}):
        for path in ("serve", "run"):
            held = [r for r in rows if r["pass"] == pass_ and r["path"] == path]
            out.append({"pass": pass_, "path": path, "answers": len(held),
                        "median_tok_s": statistics.median(r["tokens"] / r["seconds"] for r in held),
                        "median_masking_ms_per_token": statistics.median(
                            1000 * r["masking_seconds"] / max(r["tokens"], 1) for r in held),
                        "tokens": sum(r["tokens"] for r in held)})
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="qwen", help="qwen, smollm2, or a .gguf file")
    parser.add_argument("--items", type=int, default=20)
    parser.add_argument("--max-tokens", type=int, default=96)
    parser.add_argument("--threads", type=int, default=int(os.environ.get("TOOLDEC_THREADS", "0")) or os.cpu_count() or 1)
    parser.add_argument("--context", type=int, default=8192)
    parser.add_argument("--data", type=Path, default=None, help="benchmark data (default: $TOOLDEC_DATA or ../shared/data)")
    parser.add_argument("--out", type=Path, default=_ROOT / "runs" / "serve_vs_run")
    args = parser.parse_args(argv)

    from tooldec.backends.llamacpp import LlamaCppGenerator, load_llama
    from tooldec.backends.loading import settle
    from tooldec.models import qwen_coder_gguf_path, smollm2_gguf_path
    from tooldec.serving.app import Service
    from tooldec.serving.engine import Constraints
    from tooldec.serving.worker import Worker

    model = {"qwen": qwen_coder_gguf_path, "smollm2": smollm2_gguf_path}.get(args.model, lambda: Path(args.model))()
    asked = requests(data_dir(args.data), args.items, args.max_tokens)
    args.out.mkdir(parents=True, exist_ok=True)
    server = Server(model, args.threads, args.context, args.out / "server.log")
    try:
        llm, tokenizer = load_llama(model, n_ctx=args.context, threads=args.threads)
        generator = LlamaCppGenerator(llm, tokenizer)
        constraints = Constraints(generator.vocab, Hermes())
        service = Service(model.stem, tokenizer, Worker(generator, constraints), constraints)  # its worker never runs
        settle()
        rows = []
        with (args.out / "serve_vs_run.jsonl").open("a") as sink:
            for pass_ in ("1 cold", "2 warm"):
                for n, (qid, body) in enumerate(asked):
                    for path in ("serve", "run") if n % 2 == 0 else ("run", "serve"):  # neither always first
                        got = serve_answer(server, model.stem, body) if path == "serve" else \
                            run_answer(service, model.stem, body)
                        row = {"model": model.name, "threads": args.threads, "pass": pass_, "id": qid, "path": path, **got}
                        rows.append(row)
                        sink.write(json.dumps(row) + "\n")
                    print(f"pass {pass_} {n + 1}/{len(asked)} {qid}", file=sys.stderr, flush=True)
    finally:
        server.stop()
    alike = {p: sum(1 for qid, _ in asked if len({r["answer"] for r in rows if r["pass"] == p and r["id"] == qid}) == 1)
             for p in ("1 cold", "2 warm")}
    print(f"\n`python benchmarks/serve_vs_run.py --model {args.model} --items {args.items} --max-tokens "
          f"{args.max_tokens} --threads {args.threads}` ({model.name}, {platform.python_version()}, "
          f"{os.cpu_count()} cores, mask worker {'on' if generator.mask_worker else 'off'})\n")
    print("| pass | path | answers | tokens | median tokens/s | median masking ms/token | same answer as the other path |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for s in summarize(rows):
        print(f"| {s['pass']} | {s['path']} | {s['answers']} | {s['tokens']} | {s['median_tok_s']:.1f} | "
              f"{s['median_masking_ms_per_token']:.3f} | {alike[s['pass']]} of {s['answers']} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
