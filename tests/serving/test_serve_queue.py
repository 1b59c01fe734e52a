"""``tooldec serve`` under load: a bounded queue (429 with Retry-After), a per-request timeout, and
requests whose client hung up dropped from the queue or stopped while they run. In-process, on
the embedded SmolLM2; the worker is held busy by a real job whose first event waits for the test."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from .helpers import SERVED, assert_openai_error, served, served_on_a_port, wait_until

pytest.importorskip("starlette", reason="the serve extra is not installed")

URL = "/v1/chat/completions"
BODY = {"model": SERVED, "messages": [{"role": "user", "content": "What is 12 plus 30?"}], "max_tokens": 4,
        "temperature": 0}
STORY = {"model": SERVED, "messages": [{"role": "user", "content": "Write a long story about a dragon and a knight."}],
         "max_tokens": 900, "temperature": 0}


def job(service: Any, emit: Any = lambda event: None) -> Any:
    from tooldec.serving.worker import Job

    ids = list(service.tokenizer.encode("Hello, how are you?", add_special_tokens=False))
    return Job(prompt_ids=ids, specs=[], key="", tool_choice="none", parallel_tool_calls=True, max_tokens=8,
               temperature=0.0, seed=0, emit=emit)


@contextmanager
def busy(service: Any) -> Iterator[None]:
    """The worker runs a job that waits, at its first event, until the block ends."""
    entered, release = threading.Event(), threading.Event()

    def emit(event: Any) -> None:
        entered.set()
        release.wait(60)

    service.worker.submit(job(service, emit))
    assert entered.wait(60), "the holding job did not start"
    try:
        yield
    finally:
        release.set()


def test_a_full_queue_is_a_429_with_retry_after(smollm2_llama: tuple[Any, Any]) -> None:
    with served(smollm2_llama, max_queue=1) as client:
        worker = client.service.worker
        with busy(client.service):
            waiting = job(client.service)
            worker.submit(waiting)  # the queue is full
            answer = client.post(URL, json=BODY)
            error = assert_openai_error(answer, 429, "1 requests are already waiting")
            assert error["code"] == "queue_full" and int(answer.headers["retry-after"]) >= 1
            worker.cancel(waiting)
            assert worker.waiting == 0 and worker.jobs_cancelled == 1
        assert client.post(URL, json=BODY).status_code == 200  # room again
        assert worker.jobs_started == 2  # the holding job and the last request: the cancelled one never ran


def test_a_request_over_its_timeout_is_a_503_and_leaves_the_queue(smollm2_llama: tuple[Any, Any]) -> None:
    with served(smollm2_llama, request_timeout=0.5) as client:
        worker = client.service.worker
        with busy(client.service):
            error = assert_openai_error(client.post(URL, json=BODY), 503, "request timeout of 0.5 s")
            assert error["code"] == "timeout"
            assert worker.waiting == 0 and worker.jobs_cancelled == 1
            streamed = client.post(URL, json={**BODY, "stream": True})  # before its first token: a plain 503
            assert_openai_error(streamed, 503, "request timeout")
        wait_until(lambda: not worker.running and not worker.waiting)
        assert worker.jobs_started == 1


def send(address: str, body: dict[str, Any]) -> socket.socket:
    """A raw HTTP/1.1 request whose connection the test can close (a client hanging up)."""
    host, port = address.split(":")
    data = json.dumps(body).encode()
    sock = socket.create_connection((host, int(port)), timeout=60)
    sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: " + address.encode() +
                 b"\r\ncontent-type: application/json\r\ncontent-length: " + str(len(data)).encode() + b"\r\n\r\n" + data)
    return sock


def test_a_queued_request_whose_client_left_is_dropped_before_it_runs(smollm2_llama: tuple[Any, Any]) -> None:
    with served_on_a_port(smollm2_llama) as (address, service, _):
        worker = service.worker
        with busy(service):
            sock = send(address, BODY)
            wait_until(lambda: worker.waiting == 1)
            sock.close()
            wait_until(lambda: worker.waiting == 0)  # out of the queue at once, while the worker is still busy
            assert worker.jobs_cancelled == 1
        wait_until(lambda: worker.jobs_done == 1 and not worker.running)
        assert worker.jobs_started == 1


@pytest.mark.parametrize("stream", [True, False])
def test_a_running_request_whose_client_left_is_stopped(smollm2_llama: tuple[Any, Any], stream: bool) -> None:
    with served_on_a_port(smollm2_llama) as (address, service, _):
        worker = service.worker
        sock = send(address, {**STORY, "stream": stream})
        if stream:  # a few content deltas arrived
            seen = b""
            while seen.count(b'"content"') < 4:
                part = sock.recv(65536)
                assert part, seen
                seen += part
        else:
            wait_until(lambda: worker.jobs_with_tokens == 1)  # it runs
        sock.close()
        wait_until(lambda: worker.jobs_done == 1)
        assert worker.jobs_cancelled == 1
        assert worker.tokens_generated < STORY["max_tokens"]


def test_shutdown_cancels_a_running_request_after_its_grace(smollm2_llama: tuple[Any, Any]) -> None:
    """What SIGTERM does (uvicorn's handler sets ``should_exit``): no new connections, the running
    stream gets ``shutdown_timeout`` seconds, then it is cancelled and the server exits."""
    with served_on_a_port(smollm2_llama, shutdown_timeout=0.2) as (address, service, server):
        worker = service.worker
        sock = send(address, {**STORY, "stream": True})
        while b'"content"' not in sock.recv(65536):
            pass
        server.should_exit = True
        wait_until(lambda: worker.jobs_done == 1 and not worker.is_alive())
        assert worker.jobs_cancelled == 1 and worker.tokens_generated < STORY["max_tokens"]
        while sock.recv(65536):  # the stream was closed
            pass
        with pytest.raises(OSError):
            send(address, BODY).recv(1)  # no new connections
