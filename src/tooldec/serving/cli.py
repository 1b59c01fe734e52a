"""``tooldec serve``: start the OpenAI-compatible server on a GGUF model (llama.cpp backend)."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .app import Service

__all__ = ["build_service", "check_args", "main", "parser"]


def parser() -> argparse.ArgumentParser:
    from ..dialects import DIALECTS
    from ..dialects.detect import AUTO

    p = argparse.ArgumentParser(prog="tooldec serve", description="OpenAI-compatible chat completions with "
                                "tool calls valid by construction (llama.cpp backend).")
    p.add_argument("--model", type=Path, default=None, help="a .gguf file (default: the embedded SmolLM2-135M)")
    p.add_argument("--served-model-name", default=None, help="the model id clients send (default: the file's stem)")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1)")
    p.add_argument("--port", type=int, default=8000, help="port (default: 8000)")
    p.add_argument("--dialect", choices=[AUTO, *sorted(DIALECTS)], default=AUTO,
                   help="how the model writes calls (default: auto, found from the model's tokens and chat template)")
    p.add_argument("--openers", default=None,
                   help="the dialect's openers that start a call in auto mode, comma-separated (e.g. "
                        "'tag' for Hermes' official tag only, 'start,call' for Pythonic; default: the dialect's own)")
    p.add_argument("--forced-openers", default=None,
                   help="the openers a call that must come first (tool_choice required or named) opens with, "
                        "comma-separated, among those in use (default: the dialect's own; Hermes: 'tag')")
    p.add_argument("--threads", type=int, default=None, help="llama.cpp threads (default: TOOLDEC_THREADS or all)")
    p.add_argument("--n-ctx", type=int, default=8192, help="context window in tokens (default: 8192)")
    p.add_argument("--parallel", type=int, default=1,
                   help="requests generating at once, stepped as one batch in one llama.cpp context whose "
                        "--n-ctx is split evenly between them (default: 1, one after another)")
    p.add_argument("--prompt-cache-mib", type=int, default=1024,
                   help="host memory (MiB) for evaluated prompts' KV states: a slot's prompt is copied there "
                        "before another prompt overwrites it, and a new prompt starts from the one it shares the "
                        "most 64-token chunks with, whichever slot evaluated it; least recently used dropped "
                        "first (default: 1024; 0: off)")
    p.add_argument("--max-queue", type=int, default=256,
                   help="requests waiting; more are answered 429 with Retry-After (default: 256)")
    p.add_argument("--request-timeout", type=float, default=None,
                   help="seconds a request may take, queued and generating; then it is cancelled and "
                        "answered 503 (default: no limit)")
    p.add_argument("--max-body-bytes", type=int, default=16 * 2**20,
                   help="largest request body; a larger one is a 413 (default: 16 MiB)")
    p.add_argument("--cache-size", type=int, default=64, help="compiled tool lists kept (default: 64)")
    p.add_argument("--shutdown-timeout", type=float, default=10.0,
                   help="on SIGTERM or Ctrl-C, seconds running requests may take to finish before they are "
                        "cancelled; no new ones are accepted meanwhile (default: 10)")
    p.add_argument("--api-key", default=os.environ.get("TOOLDEC_API_KEY"),
                   help="clients must send it as 'Authorization: Bearer KEY' (the openai client's api_key); "
                        "/health stays open (default: TOOLDEC_API_KEY, else none)")
    p.add_argument("--insecure", action="store_true",
                   help="serve on an address other machines reach (--host 0.0.0.0) without --api-key")
    p.add_argument("--jump-forward", action=argparse.BooleanOptionalAction, default=True,
                   help="evaluate the tokens the grammar forces in one batch, each confirmed by the model "
                        "(default: on)")
    p.add_argument("--log-level", default="warning", help="uvicorn log level (default: warning)")
    return p


def check_args(args: argparse.Namespace) -> None:
    """Refuse before anything loads: ``ValueError`` for a reachable address without a key, an
    unknown opener or a bound out of range; ``FileNotFoundError`` for no ``--model`` file."""
    from ..dialects import get_dialect
    from ..dialects.detect import AUTO
    from .access import is_loopback
    from .vllm.args import opener_names

    if not is_loopback(args.host) and not args.api_key and not args.insecure:
        raise ValueError(f"--host {args.host} can be reached from other machines: give --api-key (or "
                         "TOOLDEC_API_KEY), or --insecure to serve them without one")
    if args.dialect != AUTO:  # found from the model (slow: it reads the vocabulary) as it loads
        get_dialect(args.dialect, openers=opener_names(args.openers), forced=opener_names(args.forced_openers))
    for name in ("max_queue", "max_body_bytes", "n_ctx", "cache_size", "parallel"):
        if getattr(args, name) < 1:
            raise ValueError(f"--{name.replace('_', '-')} must be at least 1")
    if args.prompt_cache_mib < 0:
        raise ValueError("--prompt-cache-mib must be 0 (off) or more")
    if args.n_ctx // args.parallel < 64:  # a slot holds at least one prompt chunk
        raise ValueError(f"--n-ctx {args.n_ctx} split between --parallel {args.parallel} slots leaves "
                         f"{args.n_ctx // args.parallel} positions each; give at least {64 * args.parallel}")
    if args.shutdown_timeout < 0:
        raise ValueError("--shutdown-timeout must be 0 or more seconds")
    if args.request_timeout is not None and args.request_timeout <= 0:
        raise ValueError("--request-timeout must be a positive number of seconds")
    if args.model is not None and not Path(args.model).is_file():
        raise FileNotFoundError(f"no GGUF file at {args.model}")


def build_service(args: argparse.Namespace) -> Service:
    """Load the model and make the :class:`~tooldec.serving.app.Service` (slow: loads the model)."""
    from ..backends.llamabatch import SlotBatch
    from ..backends.llamacpp import PROMPT_CHUNK, LlamaCppGenerator, load_llama
    from ..backends.loading import settle
    from ..backends.promptcache import PromptCache
    from ..dialects.detect import dialect_named
    from ..models import smollm2_gguf_path
    from .app import Service, Settings
    from .batching import BatchWorker
    from .engine import Constraints
    from .vllm.args import opener_names
    from .worker import Worker

    path = args.model or smollm2_gguf_path()
    dialect = dialect_named(args.dialect, path, openers=opener_names(args.openers),  # refused before the model loads
                            forced=opener_names(args.forced_openers))
    batched = args.parallel > 1  # then the model's own context is not used: made small
    llm, tokenizer = load_llama(path, n_ctx=PROMPT_CHUNK if batched else args.n_ctx, threads=args.threads,
                                progress=lambda message: print(message, file=sys.stderr))
    cache = PromptCache(args.prompt_cache_mib * 2**20) if args.prompt_cache_mib else None  # one slot or N: the same
    generator = LlamaCppGenerator(llm, tokenizer, jump_forward=args.jump_forward,
                                  prompt_cache=None if batched else cache)
    constraints = Constraints(generator.vocab, dialect, cache_size=args.cache_size)
    worker = (BatchWorker(generator, SlotBatch(llm, args.parallel, args.n_ctx, cache), constraints,
                          max_queue=args.max_queue)
              if batched else Worker(generator, constraints, max_queue=args.max_queue))
    settle()  # what start-up made lives as long as the server
    return Service(args.served_model_name or Path(path).stem, tokenizer, worker, constraints,
                   Settings(max_body_bytes=args.max_body_bytes, request_timeout=args.request_timeout))


def main(argv: Sequence[str] | None = None) -> int:
    """Run the server until interrupted (it listens at once and loads the model on a thread); the
    exit status, 2 for bad arguments or a model that cannot load."""
    import uvicorn

    from ..errors import ToolDecError
    from .app import create_app

    args = parser().parse_args(argv)
    try:
        check_args(args)
    except (FileNotFoundError, ValueError, ToolDecError) as error:
        print(f"tooldec serve: error: {error}", file=sys.stderr)
        return 2

    def load() -> Service:
        service = build_service(args)  # its settle() takes what start-up made out of the collector's reach
        print(f"tooldec serve: {service.model_id} ready on http://{args.host}:{args.port}/v1", file=sys.stderr,
              flush=True)
        return service

    def failed() -> None:
        server.should_exit = True

    app = create_app(load, api_key=args.api_key, on_failure=failed)
    server = uvicorn.Server(uvicorn.Config(app, host=args.host, port=args.port, log_level=args.log_level,
                                           timeout_graceful_shutdown=args.shutdown_timeout))
    server.run()
    return 2 if app.state.failed else 0


if __name__ == "__main__":
    sys.exit(main())
