"""``GET /metrics``: the server's counters in Prometheus' text format (version 0.0.4), written
here because the format is a few lines and the server needs no other dependency for it."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

from .worker import Worker

__all__ = ["CONTENT_TYPE", "metrics_text"]

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


def _metric(name: str, kind: str, about: str, values: Mapping[str, float] | float, label: str = "") -> list[str]:
    lines = [f"# HELP {name} {about}", f"# TYPE {name} {kind}"]
    if isinstance(values, Mapping):
        lines += [f'{name}{{{label}="{_escape(key)}"}} {_number(value)}' for key, value in sorted(values.items())]
    else:
        lines.append(f"{name} {_number(values)}")
    return lines


def _number(value: float) -> str:
    """A sample's value: an integer in full (``:g`` keeps 6 digits: 1234567 tokens would read 1.23457e+06)."""
    return str(value) if isinstance(value, int) else f"{value:g}"


def _escape(value: str) -> str:
    """A label value as the format quotes it."""
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def metrics_text(worker: Worker, answered: Counter[int], refused: Counter[str]) -> str:
    """The exposition text: the worker's counters, requests by HTTP status and refusals by code."""
    w = worker
    lines = [
        *_metric("tooldec_requests_total", "counter", "Chat completion requests answered, by HTTP status.",
                 {str(k): v for k, v in answered.items()}, "status"),
        *_metric("tooldec_requests_refused_total", "counter", "Requests refused, by error code.", dict(refused), "code"),
        *_metric("tooldec_queue_length", "gauge", "Requests waiting for the model.", w.waiting),
        *_metric("tooldec_running", "gauge", "Requests generating now.", int(w.running)),
        *_metric("tooldec_jobs_cancelled_total", "counter",
                 "Requests cancelled (client gone, timeout, shutdown): left the queue or stopped while running.",
                 w.jobs_cancelled),
        *_metric("tooldec_tokens_generated_total", "counter", "Tokens generated.", w.tokens_generated),
        *_metric("tooldec_tokens_forced_total", "counter",
                 "Tokens the grammar forced that the model confirmed, evaluated in jump-forward drafts.",
                 w.tokens_forced),
        *_metric("tooldec_decodes_total", "counter",
                 "Batches the model evaluated (llama_decode calls: prompt chunks, tokens, drafts).", w.decodes),
        *_metric("tooldec_generation_seconds_total", "counter",
                 "Time the model spent on requests (tokens/s: tokens over this).", w.busy_seconds),
        *_metric("tooldec_masking_seconds_total", "counter",
                 "Time the decoding loop spent masking (per token: over tooldec_tokens_generated_total).",
                 w.masking_seconds),
        "# HELP tooldec_time_to_first_token_seconds Time from a request's arrival in the queue to its first token.",
        "# TYPE tooldec_time_to_first_token_seconds summary",
        f"tooldec_time_to_first_token_seconds_sum {w.first_token_seconds:g}",
        f"tooldec_time_to_first_token_seconds_count {w.jobs_with_tokens}",
        *_metric("tooldec_calls_returned_total", "counter", "Tool calls returned to clients.", w.calls_returned),
        *_metric("tooldec_calls_cut_total", "counter",
                 "Calls a generation ended inside (broken; the budget check keeps this at 0).", w.calls_cut),
        *_metric("tooldec_refusals_total", "counter",
                 "Tokens the model picked that the call format refuses (masked away), by what they would have written.",
                 dict(w.refusals), "kind"),
    ]
    cache = w.prompt_cache
    if cache is not None:
        lines += [
            *_metric("tooldec_prompt_cache_hits_total", "counter",
                     "Prompts that started from the host-memory prompt cache rather than their slot's own cache.",
                     cache.hits),
            *_metric("tooldec_prompt_cache_tokens_restored_total", "counter",
                     "Prompt tokens taken from the prompt cache instead of evaluated.", cache.tokens_restored),
            *_metric("tooldec_prompt_cache_bytes", "gauge", "Bytes of KV state the prompt cache holds.", cache.bytes),
            *_metric("tooldec_prompt_cache_entries", "gauge", "Prompts the prompt cache holds.", len(cache)),
        ]
    return "\n".join(lines) + "\n"
