"""Real servers on 127.0.0.1 for the source tests: the TMDB-like FastAPI app (uvicorn, in a
thread) and the MCP test server (a subprocess, over stdio or streamable HTTP)."""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from backends.smollm2 import smollm2  # the module pytest imported for tests/backends (one cache)

from tooldec.tokens import Vocabulary

HERE = Path(__file__).resolve().parent
MCP_SERVER = [sys.executable, str(HERE / "mcp_server.py")]


class Served:
    """An ASGI app served by uvicorn on 127.0.0.1 (a port the OS picked) in a daemon thread."""

    def __init__(self, app: Any) -> None:
        import uvicorn

        self.app = app
        self._socket = socket.socket()
        self._socket.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._socket.getsockname()[1]}"
        self._server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [self._socket]}, daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 20
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.02)

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(10)
        self._socket.close()


@pytest.fixture(scope="session")
def smollm2_model() -> tuple[Any, Any, Vocabulary]:
    """``(model, tokenizer, vocab)`` of SmolLM2-135M-Instruct (transformers, loaded once)."""
    return smollm2()


@pytest.fixture
def tmdb_server() -> Iterator[Served]:
    from .tmdb_app import make_app

    served = Served(make_app())
    yield served
    served.stop()


@pytest.fixture(scope="module")
def mcp_http_url() -> Iterator[str]:
    """The MCP test server over streamable HTTP, in its own process."""
    process = subprocess.Popen([*MCP_SERVER, "--http"], stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        port = int(process.stdout.readline())
        url = f"http://127.0.0.1:{port}/mcp"
        deadline = time.monotonic() + 20
        while True:  # the port is bound before uvicorn serves: wait for a connection to succeed
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise
                time.sleep(0.05)
        yield url
    finally:
        process.terminate()
        process.wait(10)
