"""What running ``tooldec serve`` needs: ``/health`` telling ready from loading, an API key for
addresses beyond loopback, and ``/metrics`` in Prometheus' text format. In-process, on the
embedded SmolLM2."""

from __future__ import annotations

import re
import threading
from typing import Any

import pytest

from tooldec.serving.cli import main

from .helpers import SERVED, TOOLS, assert_openai_error, served, service_on, wait_until

pytest.importorskip("starlette", reason="the serve extra is not installed")

URL = "/v1/chat/completions"
ADD_Q = {"model": SERVED, "messages": [{"role": "user", "content": "What is 12 plus 30?"}], "temperature": 0,
         "max_tokens": 40}


def test_health_tells_loading_from_ready(smollm2_llama: tuple[Any, Any]) -> None:
    from starlette.testclient import TestClient

    from tooldec.serving.app import create_app

    release = threading.Event()

    def load() -> Any:
        assert release.wait(60)
        return service_on(smollm2_llama)

    with TestClient(create_app(load)) as client:
        loading = client.get("/health")
        assert loading.status_code == 503 and loading.json() == {"status": "loading"}
        error = assert_openai_error(client.post(URL, json=ADD_Q), 503, "the model is loading")
        assert error["code"] == "model_not_ready"
        release.set()
        wait_until(lambda: client.get("/health").status_code == 200)
        assert client.get("/health").json()["status"] == "ok"
        assert client.post(URL, json={**ADD_Q, "max_tokens": 2}).status_code == 200


def test_health_says_when_loading_failed() -> None:
    from starlette.testclient import TestClient

    from tooldec.serving.app import create_app

    told = threading.Event()

    def load() -> Any:
        raise FileNotFoundError("no GGUF file at /nowhere.gguf")

    with TestClient(create_app(load, on_failure=told.set)) as client:
        assert told.wait(30)
        failed = client.get("/health")
        assert failed.status_code == 503 and failed.json()["status"] == "failed"
        assert "no GGUF file at /nowhere.gguf" in failed.json()["error"]
        assert_openai_error(client.post(URL, json=ADD_Q), 503, "the model failed to load")


def test_an_api_key_is_checked_as_openai_clients_send_it(smollm2_llama: tuple[Any, Any]) -> None:
    with served(smollm2_llama, api_key="s3cret") as client:
        for headers in ({}, {"authorization": "Bearer wrong"}, {"authorization": "s3cret"}):
            answer = client.post(URL, json=ADD_Q, headers=headers)
            error = assert_openai_error(answer, 401, "API key")
            assert error["code"] == "invalid_api_key" and answer.headers["www-authenticate"] == "Bearer"
            assert client.get("/metrics", headers=headers).status_code == 401
        assert client.get("/health").status_code == 200  # probes carry no key
        models = client.get("/v1/models", headers={"authorization": "Bearer s3cret"})
        assert models.status_code == 200 and models.json()["data"][0]["id"] == SERVED


def test_an_address_beyond_loopback_needs_a_key_or_insecure(capsys: pytest.CaptureFixture[str],
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TOOLDEC_API_KEY", raising=False)
    missing = ["--model", "/nonexistent.gguf"]
    assert main(["--host", "0.0.0.0", *missing]) == 2
    assert "--host 0.0.0.0 can be reached from other machines: give --api-key" in capsys.readouterr().err
    for allowed in (["--api-key", "k"], ["--insecure"], ["--host", "::1"]):  # past the check: the file is missing
        assert main(["--host", "0.0.0.0", *missing, *allowed]) == 2
        assert "no GGUF file at /nonexistent.gguf" in capsys.readouterr().err
    monkeypatch.setenv("TOOLDEC_API_KEY", "from-env")
    assert main(["--host", "0.0.0.0", *missing]) == 2
    assert "no GGUF file" in capsys.readouterr().err


SAMPLE = re.compile(r'^[a-z_]+(\{[a-z_]+="[^"]*"\})? -?[0-9.e+-]+$')


def scrape(client: Any) -> dict[str, float]:
    answer = client.get("/metrics")
    assert answer.status_code == 200 and answer.headers["content-type"].startswith("text/plain; version=0.0.4")
    samples = {}
    for line in answer.text.splitlines():
        if not line.startswith("#"):
            assert SAMPLE.match(line), line
            name, value = line.rsplit(" ", 1)
            samples[name] = float(value)
    return samples


def test_metrics_count_requests_tokens_calls_and_refusals(smollm2_llama: tuple[Any, Any]) -> None:
    with served(smollm2_llama) as client:
        before = scrape(client)
        assert before["tooldec_tokens_generated_total"] == 0 and before["tooldec_queue_length"] == 0
        called = client.post(URL, json={**ADD_Q, "tools": TOOLS, "tool_choice": "required"}).json()
        calls = len(called["choices"][0]["message"]["tool_calls"])
        assert client.post(URL, json={**ADD_Q, "max_tokens": 5000}).status_code == 400
        assert client.post(URL, json={**ADD_Q, "model": "gpt-4o"}).status_code == 404
        after = scrape(client)
        assert after['tooldec_requests_total{status="200"}'] == 1
        assert after['tooldec_requests_total{status="400"}'] == after['tooldec_requests_total{status="404"}'] == 1
        assert after['tooldec_requests_refused_total{code="context_length_exceeded"}'] == 1
        assert after['tooldec_requests_refused_total{code="model_not_found"}'] == 1
        assert after["tooldec_tokens_generated_total"] == called["usage"]["completion_tokens"]
        assert after["tooldec_calls_returned_total"] == calls >= 1
        assert after["tooldec_calls_cut_total"] == 0
        assert after["tooldec_time_to_first_token_seconds_count"] == 1
        assert after["tooldec_time_to_first_token_seconds_sum"] > 0
        assert after["tooldec_masking_seconds_total"] > 0 and after["tooldec_generation_seconds_total"] > 0
        worker = client.service.worker
        assert after["tooldec_tokens_forced_total"] == worker.tokens_forced > 0  # the call's framing, drafted
        assert after["tooldec_decodes_total"] == worker.decodes > 0
        refusals = {name.split('"')[1]: value for name, value in after.items() if name.startswith("tooldec_refusals_total{")}
        assert refusals == client.service.worker.refusals  # what the model's picks would have broken, by kind
        assert "# TYPE tooldec_refusals_total counter" in client.get("/metrics").text


def test_metrics_write_large_counts_in_full(smollm2_llama: tuple[Any, Any]) -> None:
    """A count past a million is written to the unit, not rounded to 6 digits (1.23457e+06)."""
    from collections import Counter

    from tooldec.serving.metrics import metrics_text

    worker = service_on(smollm2_llama).worker  # never started
    worker.tokens_generated = 1234567
    text = metrics_text(worker, Counter({200: 10**7 + 1}), Counter())
    assert "tooldec_tokens_generated_total 1234567\n" in text
    assert 'tooldec_requests_total{status="200"} 10000001\n' in text
