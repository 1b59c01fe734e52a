"""``tooldec serve --parallel 4`` on the embedded SmolLM2: concurrent streams stepped in one batch
give valid calls, a request cancelled mid-batch leaves the others' answers as they were, a
greedy answer in a batch is the answer it gets alone, and a prompt whose slot was overwritten
comes back from the prompt cache with the same answer."""

from __future__ import annotations

import asyncio
import json
import socket
import urllib.request
from collections.abc import Iterator
from typing import Any

import jsonschema
import pytest

from .helpers import SERVED, distinct_tools, served_on_a_port, wait_until

openai = pytest.importorskip("openai")

QUESTIONS = ["What is the weather in Paris?", "Add 12 and 30.", "How warm is it in Oslo today?", "What is 7 plus 5?",
             "Weather in Rome, please.", "Sum 100 and 23.", "Is it raining in Lima?", "Add 2 and 2."]


def body(index: int) -> dict[str, Any]:
    """Request ``index``: one of two tool lists (compiled once), a call required every other one, greedy."""
    return {"model": SERVED, "messages": [{"role": "user", "content": QUESTIONS[index % len(QUESTIONS)]}],
            "tools": distinct_tools(index % 2), "tool_choice": "required" if index % 2 == 0 else "auto",
            "max_tokens": 40, "temperature": 0}


async def stream(address: str, index: int) -> tuple[str, list[tuple[str, str]]]:
    """Request ``index`` streamed with the openai client: its content and its calls, put together."""
    client = openai.AsyncOpenAI(base_url=f"http://{address}/v1", api_key="none", max_retries=0, timeout=120)
    content, calls = "", {}
    async with client:
        async for part in await client.chat.completions.create(**body(index), stream=True):
            delta = part.choices[0].delta if part.choices else None
            content += (delta.content or "") if delta else ""
            for call in (delta.tool_calls or []) if delta else []:
                name, arguments = calls.get(call.index, ("", ""))
                calls[call.index] = (name + (call.function.name or ""), arguments + (call.function.arguments or ""))
    return content, [calls[k] for k in sorted(calls)]


def valid(index: int, answer: tuple[str, list[tuple[str, str]]]) -> bool:
    """Every call names a tool of request ``index`` with arguments its schema accepts; a required call came."""
    schemas = {t["function"]["name"]: t["function"]["parameters"] for t in distinct_tools(index % 2)}
    content, calls = answer
    if index % 2 == 0 and not calls or "<tool_call>" in content:
        return False
    for name, arguments in calls:
        try:
            jsonschema.validate(json.loads(arguments), schemas[name])
        except (KeyError, ValueError, jsonschema.ValidationError):
            return False
    return True


async def together(address: str, indices: list[int]) -> list[tuple[str, list[tuple[str, str]]]]:
    return list(await asyncio.gather(*(stream(address, index) for index in indices)))


@pytest.fixture(scope="module")
def parallel_server(smollm2_llama: tuple[Any, Any]) -> Iterator[tuple[str, Any]]:
    with served_on_a_port(smollm2_llama, parallel=4, max_queue=16) as (address, service, _):
        yield address, service


@pytest.fixture(scope="module")
def alone(parallel_server: tuple[str, Any]) -> list[tuple[str, list[tuple[str, str]]]]:
    """The first four requests' answers, each sent alone."""
    address, _ = parallel_server
    return [asyncio.run(stream(address, index)) for index in range(4)]


def test_eight_concurrent_streams_on_four_slots_give_only_valid_calls(parallel_server: tuple[str, Any]) -> None:
    address, service = parallel_server
    answers = asyncio.run(together(address, list(range(8))))
    assert [index for index, answer in enumerate(answers) if not valid(index, answer)] == []
    assert sum(bool(calls) for _, calls in answers) >= 4  # the required ones at least
    assert service.worker.widest == 4  # they were stepped together


def test_a_greedy_answer_in_a_batch_is_its_answer_alone(parallel_server: tuple[str, Any],
                                                         alone: list[tuple[str, list[tuple[str, str]]]]) -> None:
    address, service = parallel_server
    assert asyncio.run(together(address, list(range(4)))) == alone
    assert service.worker.widest >= 2


def test_a_request_cancelled_mid_batch_leaves_the_others_answers(parallel_server: tuple[str, Any],
                                                                 alone: list[tuple[str, list[tuple[str, str]]]]) -> None:
    address, service = parallel_server
    worker = service.worker
    cancelled_before, done_before = worker.jobs_cancelled, worker.jobs_done
    host, port = address.split(":")
    story = json.dumps({"model": SERVED, "messages": [{"role": "user", "content": "Write a long story about a dragon."}],
                        "max_tokens": 200, "temperature": 0, "stream": True}).encode()

    async def leaving() -> None:
        """A streamed request whose client hangs up after a few deltas, while the others run."""
        sock = socket.create_connection((host, int(port)), timeout=60)
        sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: " + address.encode() + b"\r\ncontent-type: "
                     b"application/json\r\ncontent-length: " + str(len(story)).encode() + b"\r\n\r\n" + story)
        seen = b""
        while seen.count(b'"content"') < 4:
            part = await asyncio.to_thread(sock.recv, 65536)
            assert part, seen
            seen += part
        sock.close()

    async def both() -> list[tuple[str, list[tuple[str, str]]]]:
        others = asyncio.gather(*(stream(address, index) for index in range(3)))
        await leaving()
        return list(await others)

    assert asyncio.run(both()) == alone[:3]
    wait_until(lambda: worker.jobs_done == done_before + 4)
    assert worker.jobs_cancelled == cancelled_before + 1


def test_a_prompt_overwritten_in_its_slot_comes_back_from_the_prompt_cache_with_the_same_answer(
        smollm2_llama: tuple[Any, Any]) -> None:
    from tooldec.backends.promptcache import PromptCache

    cache = PromptCache(256 * 2**20)
    with served_on_a_port(smollm2_llama, parallel=2, prompt_cache=cache) as (address, _, _):
        first = asyncio.run(stream(address, 0))
        asyncio.run(together(address, [1, 3]))  # both slots take the other tool list's prompts
        assert cache.saved >= 1 and cache.hits == 0
        assert asyncio.run(stream(address, 0)) == first
        assert cache.hits == 1 and cache.tokens_restored >= 64
        with urllib.request.urlopen(f"http://{address}/metrics", timeout=30) as answer:
            metrics = answer.read().decode()
    assert "tooldec_prompt_cache_hits_total 1\n" in metrics
    assert f"tooldec_prompt_cache_tokens_restored_total {cache.tokens_restored}\n" in metrics
    assert f"tooldec_prompt_cache_bytes {cache.bytes}\n" in metrics


def test_the_context_of_a_request_is_its_slots(smollm2_llama: tuple[Any, Any]) -> None:
    """Two slots in 2048 positions: a request has 1024, and more is the 400 context_length_exceeded."""
    from .helpers import served

    url = "/v1/chat/completions"
    with served(smollm2_llama, parallel=2) as client:
        assert client.service.worker.context == 1024
        long = [{"role": "user", "content": "Count the sheep: " + "sheep " * 1500}]
        answer = client.post(url, json={"model": SERVED, "messages": long})
        assert answer.status_code == 400 and answer.json()["error"]["code"] == "context_length_exceeded"
        short = [{"role": "user", "content": "What is 12 plus 30?"}]
        answer = client.post(url, json={"model": SERVED, "messages": short, "max_tokens": 1024})
        error = answer.json()["error"]
        assert answer.status_code == 400 and error["code"] == "context_length_exceeded", error
        assert "maximum context length is 1024 tokens" in error["message"]


def test_a_new_tool_list_is_compiled_before_the_batch_sees_it(smollm2_llama: tuple[Any, Any]) -> None:
    """An auto-mode request's new tool list is compiled while the request is prepared, so the
    batch, whose every slot waits on its worker thread, finds it in the cache."""
    from tooldec.serving.protocol import parse_request

    from .helpers import service_on

    service = service_on(smollm2_llama)  # its worker never runs; the batch's prepares the same way
    request = {**body(1), "tools": distinct_tools(7)}
    assert request["tool_choice"] == "auto"
    before = service.constraints.cached
    job = service.prepare(parse_request(request, SERVED))
    assert service.constraints.cached == before + 1 and job.key


def test_a_context_too_small_to_split_is_refused_before_loading() -> None:
    from tooldec.serving.cli import check_args, parser

    with pytest.raises(ValueError, match="--parallel 8 slots leaves 32 positions each"):
        check_args(parser().parse_args(["--parallel", "8", "--n-ctx", "256"]))


def test_a_negative_prompt_cache_is_refused_before_loading() -> None:
    from tooldec.serving.cli import check_args, parser

    with pytest.raises(ValueError, match="--prompt-cache-mib must be 0"):
        check_args(parser().parse_args(["--prompt-cache-mib", "-1"]))
    assert parser().parse_args([]).prompt_cache_mib == 1024
    check_args(parser().parse_args(["--prompt-cache-mib", "0"]))


def test_jump_forward_is_on_by_default_with_any_number_of_slots() -> None:
    from tooldec.serving.cli import check_args, parser

    for argv in (["--parallel", "4"], []):
        args = parser().parse_args(argv)
        check_args(args)
        assert args.jump_forward is True
    assert parser().parse_args(["--parallel", "4", "--no-jump-forward"]).jump_forward is False


def test_jump_forward_in_the_batch_gives_the_one_slot_loop_s_answers(smollm2_llama: tuple[Any, Any]) -> None:
    """Required calls on two slots and on one, each with and without drafts: the batch's answers
    are the one-slot loop's, every call valid, and the drafts' tokens cost fewer decodes. With
    drafts and without, the answers differ only where the one-slot loop's do (a draft's batch
    moves the last bits of its logits: here Rome's text after the call, and Lima's case)."""
    indices = [0, 2, 4, 6]  # four questions, a call required
    answers, forced, decodes = {}, {}, {}
    for parallel, jump in ((2, False), (2, True), (1, False), (1, True)):
        with served_on_a_port(smollm2_llama, parallel=parallel, jump_forward=jump) as (address, service, _):
            worker = service.worker
            if parallel == 1:
                answers[parallel, jump] = [asyncio.run(stream(address, index)) for index in indices]
                continue
            answers[parallel, jump] = asyncio.run(together(address, indices))  # counted before each answer ends
            forced[jump], decodes[jump] = worker.tokens_forced, worker.decodes
            assert worker.widest == 2
    assert answers[2, True] == answers[1, True]
    assert answers[2, False] == answers[1, False]
    assert [index for index, answer in zip(indices, answers[2, True]) if not valid(index, answer)] == []
    assert all(calls for _, calls in answers[2, True])
    assert answers[2, True][:2] == answers[2, False][:2]
    assert forced[False] == 0 < forced[True]
    assert decodes[True] < decodes[False]
