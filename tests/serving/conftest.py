"""Fixtures for the serving tests.

The vLLM tests (``test_vllm_*.py``, marker ``vllm``) need vLLM, which lives in its own virtual
environment (``make vllm``); where vLLM is not installed they are not collected at all.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from .helpers import free_port, start_process, stop_process, wait_healthy

collect_ignore_glob = [] if importlib.util.find_spec("vllm") else ["test_vllm_*.py"]
if importlib.util.find_spec("openai") is None or importlib.util.find_spec("uvicorn") is None:
    collect_ignore_glob.append("test_serve*.py")


@pytest.fixture(scope="session")
def serve_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``tooldec serve`` on the embedded SmolLM2, on a free port of 127.0.0.1, for the session."""
    port = free_port()
    log = tmp_path_factory.mktemp("serve") / "server.log"
    threads = os.environ.get("TOOLDEC_THREADS", "1")
    process = start_process([sys.executable, "-m", "tooldec.cli", "serve", "--port", str(port),
                             "--threads", threads, "--n-ctx", "4096", "--log-level", "info"], log)
    try:
        wait_healthy(f"http://127.0.0.1:{port}/health", process, log, timeout=300)
        yield f"http://127.0.0.1:{port}"
    finally:
        stop_process(process)




@pytest.fixture(scope="session")
def smollm2_llama() -> tuple[Any, Any]:
    """The embedded SmolLM2 loaded in this process (context 1024, one thread) and its tokenizer:
    the in-process servers of the tests (``helpers.served``) take turns on it."""
    pytest.importorskip("llama_cpp", reason="the llama extra is not installed")
    from tooldec.backends.llamacpp import LlamaCppGenerator, load_llama
    from tooldec.models import smollm2_gguf_path

    llm, tokenizer = load_llama(smollm2_gguf_path(), n_ctx=1024, threads=1)
    return LlamaCppGenerator(llm, tokenizer), tokenizer
