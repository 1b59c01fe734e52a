"""``tooldec serve`` and ``tooldec run``'s loop write the same answer to the same greedy request.

Both take their tokens from the same step (``tooldec.backends.step.Stepper``); the server's
worker drives it from its job queue, ``LlamaCppGenerator.generate`` from a call. The request goes
to the server over HTTP, and the same prompt (rendered by the server's own ``Service.prepare``)
is generated in this process with ``generate``, on the embedded SmolLM2: the token counts, the
calls and the text must be the same.
"""

from __future__ import annotations

import functools
import json
from typing import Any

import pytest

from tooldec.dialects import Hermes
from tooldec.models import smollm2_gguf_path
from tooldec.serving.app import Service
from tooldec.serving.engine import Constraints
from tooldec.serving.protocol import parse_request
from tooldec.serving.worker import Worker

from .helpers import ADD, TOOLS, WEATHER, http

pytest.importorskip("llama_cpp", reason="the llama extra is not installed")

MODEL = "SmolLM2-135M-Instruct.Q4_1"
CONTEXT = 4096  # the server's --n-ctx in conftest: the same budgets on both sides


@functools.cache
def service() -> Service:
    """The server's request preparation over a model loaded in this process (its worker never runs)."""
    from tooldec.backends import load
    from tooldec.backends.llamacpp import LlamaCppGenerator

    llm, tokenizer, vocab, _ = load(smollm2_gguf_path(), "llamacpp", threads=1, context=CONTEXT)
    generator = LlamaCppGenerator(llm, tokenizer, vocab)
    constraints = Constraints(vocab, Hermes())
    return Service(MODEL, tokenizer, Worker(generator, constraints), constraints)


def run_loop(body: dict[str, Any]) -> tuple[list[int], str]:
    """The request generated with ``LlamaCppGenerator.generate``: its tokens, and the text without the end."""
    served = service()
    job = served.prepare(parse_request(body, MODEL))
    generator = served.worker.generator
    compiled = served.constraints.compile(job.specs, job.key) if job.specs else None
    generation = generator.generate(
        job.prompt_ids, max_new_tokens=served.worker.budget(job), temperature=0.0,
        grammar=compiled.grammar if compiled is not None else None, tool_choice=job.tool_choice,
        parallel_tool_calls=job.parallel_tool_calls,
        stop_after_call=None if job.parallel_tool_calls else Hermes())  # the server ends the turn with its last call
    text = generator.vocab.decode([t for t in generation.ids if t not in generator.eos_ids]).decode()
    return list(generation.ids), text


def forced_cut(ids: list[int]) -> int:
    """Where the server ends a forced answer the loop wrote on: the first token after a closed call
    whose text is not whitespace (tokens kept, that one included); ``len(ids)`` if there is none."""
    decode = service().worker.generator.vocab.decode
    for end in range(1, len(ids) + 1):
        text = decode(ids[:end]).decode(errors="replace")
        after = text.rpartition("</tool_call>")[2].lstrip() if "</tool_call>" in text else ""
        if after and not "<tool_call>".startswith(after[:11]):  # text, not another call's opener
            return end
    return len(ids)


@pytest.mark.parametrize(("question", "options"), [
    ("What is the weather like in Paris today?", {"tools": TOOLS, "tool_choice": "required"}),
    ("What is 12 plus 30?", {"tools": [ADD], "tool_choice": "required", "parallel_tool_calls": False}),
    ("Weather in Llanfairpwllgwyngyllgogerychwyrndrobwllllantysiliogogogoch?",
     {"tools": [WEATHER], "tool_choice": "required", "max_tokens": 30}),
    ("What is the weather in Paris, in London and in Rome?", {"tools": TOOLS, "tool_choice": "auto"}),
    ("Say hello.", {"tools": TOOLS, "tool_choice": "auto"}),
    ("What is the capital of France?", {}),
])
def test_the_server_and_the_run_loop_write_the_same_greedy_answer(serve_url: str, question: str,
                                                                  options: dict[str, Any]) -> None:
    body = {"model": MODEL, "messages": [{"role": "user", "content": question}], "temperature": 0,
            "max_tokens": 64, **options}
    status, answer = http("POST", f"{serve_url}/v1/chat/completions", json.dumps(body).encode(), timeout=300)
    assert status == 200, answer
    message = answer["choices"][0]["message"]
    served_calls = [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in message.get("tool_calls") or []]
    ids, text = run_loop(body)
    if options.get("tool_choice") == "required":  # a forced answer is its calls: text after them ends it
        ids = ids[: forced_cut(ids)]
    assert answer["usage"]["completion_tokens"] == len(ids), (text, message)
    assert served_calls == [(c.name, dict(c.arguments)) for c in Hermes().parse_calls(text)], (text, message)
    if not served_calls:
        assert (message["content"] or "") == text, (text, message)


def test_the_same_greedy_request_gets_the_same_answer_whatever_the_cache_held(serve_url: str) -> None:
    """The server keeps its KV cache between requests: the same request, sent right after itself and
    after another one, is answered as the first time (``PROMPT_CHUNK`` in the llama.cpp backend)."""
    def ask(question: str) -> tuple[Any, list[Any]]:
        body = {"model": MODEL, "messages": [{"role": "user", "content": question}], "temperature": 0,
                "max_tokens": 48, "tools": TOOLS, "tool_choice": "auto"}
        status, answer = http("POST", f"{serve_url}/v1/chat/completions", json.dumps(body).encode(), timeout=300)
        assert status == 200, answer
        message = answer["choices"][0]["message"]
        return message["content"], [call["function"] for call in message.get("tool_calls") or []]  # ids are fresh

    first = ask("Multiply 7 by 8 please.")
    assert ask("Multiply 7 by 8 please.") == first
    ask("Say hi.")
    assert ask("Multiply 7 by 8 please.") == first
