"""``tooldec serve``'s HTTP surface: an OpenAI-compatible Starlette app over one llama.cpp model.

Routes: ``POST /v1/chat/completions`` (tools, tool_choice, parallel_tool_calls, max_tokens,
temperature, seed, stream), ``GET /v1/models``, ``GET /health``. Tools are executed by the
client, as with OpenAI: a call comes back as ``tool_calls`` and its result goes in the next
request's ``tool`` message. Every error is OpenAI's error object with a 4xx status: malformed
JSON, an unknown model (404), a bad tool schema (the typed error's message), a full queue (503).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

from anyio import to_thread
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from ..errors import BudgetError, ToolDecError, ToolNotFoundError
from .assemble import CallEvent, ContentEvent, Event, ReasoningEvent
from .engine import Constraints, tools_key
from .prompt import render_prompt
from .protocol import (
    ChatRequest,
    RequestError,
    call_deltas,
    chunk,
    completion,
    error_body,
    new_id,
    parse_request,
    usage,
)
from .worker import Done, Job, QueueFull, Worker

__all__ = ["Service", "create_app"]

DEFAULT_MAX_TOKENS = 512


class Service:
    """What the routes share: the model's name, tokenizer and the worker that runs it.

    Args:
        model_id: The name clients put in ``model``.
        tokenizer: The model's transformers tokenizer (chat template).
        worker: The llama.cpp worker (started by the app).
        constraints: Validates and compiles request tools (shared: docs/DESIGN.md, concurrency contract).
    """

    def __init__(self, model_id: str, tokenizer: Any, worker: Worker, constraints: Constraints) -> None:
        self.model_id = model_id
        self.tokenizer = tokenizer
        self.worker = worker
        self.constraints = constraints
        self.started = int(time.time())

    def prepare(self, request: ChatRequest) -> Job:
        """Validate the tools and render the prompt (on a thread: both can take a while).

        Raises:
            RequestError: A tool cannot be registered, tool_choice names none of them, or a call
                that must come first cannot close within max_tokens.
        """
        toolset = None
        if request.tools and request.tool_choice != "none":
            try:
                toolset = self.constraints.tools(request.tools)
            except ToolDecError as error:
                raise RequestError(f"invalid tools: {error}", param="tools") from error
            if request.tool_choice not in ("auto", "required") and request.tool_choice not in toolset:
                raise RequestError(f"tool_choice names {request.tool_choice!r}, which is not in tools: "
                                   f"{', '.join(toolset.names)}", param="tool_choice")
        prompt = render_prompt(self.tokenizer, request.messages, toolset, request.tools, self.constraints.dialect)
        ids = list(self.tokenizer.encode(prompt, add_special_tokens=False))
        specs = request.tools if toolset is not None else []
        job = Job(prompt_ids=ids, specs=specs, key=tools_key(specs) if specs else "",
                  tool_choice=request.tool_choice, parallel_tool_calls=request.parallel_tool_calls,
                  max_tokens=request.max_tokens or DEFAULT_MAX_TOKENS, temperature=request.temperature,
                  seed=request.seed, emit=lambda event: None)
        budget = self.worker.budget(job)
        if specs and request.tool_choice != "auto" and budget >= 1:  # a call must come first: it must fit
            machine = self.constraints.machine(self.constraints.compile(specs, job.key), tool_choice=request.tool_choice)
            try:
                machine.check_budget(budget)
            except BudgetError as error:
                raise RequestError(str(error), param="max_tokens") from error
        return job


def _error(error: RequestError) -> JSONResponse:
    kind = "invalid_request_error" if error.status < 500 else "server_error"
    return JSONResponse(error_body(error.message, param=error.param, code=error.code, kind=kind),
                        status_code=error.status)


async def _events(service: Service, job: Job) -> AsyncGenerator[Event | Done, None]:
    """Submit ``job`` and yield its events as the worker produces them."""
    loop = asyncio.get_running_loop()
    inbox: asyncio.Queue[Event | Done] = asyncio.Queue()

    def emit(event: Event | Done) -> None:
        loop.call_soon_threadsafe(inbox.put_nowait, event)

    job.emit = emit
    try:
        service.worker.submit(job)
    except QueueFull as error:
        raise RequestError(str(error), status=503, code="queue_full") from error
    try:
        while True:
            event = await inbox.get()
            yield event
            if isinstance(event, Done):
                return
    finally:
        job.cancelled.set()  # the client left (or we are done): the worker stops at the next token


async def chat_completions(request: Request) -> Response:
    service: Service = request.app.state.service
    try:
        try:
            body = json.loads(await request.body())
        except (json.JSONDecodeError, UnicodeDecodeError) as error:
            raise RequestError(f"the request body is not valid JSON: {error}") from error
        chat = parse_request(body, service.model_id)
        job = await to_thread.run_sync(service.prepare, chat)
    except RequestError as error:
        return _error(error)
    except ToolNotFoundError as error:
        return _error(RequestError(str(error), param="tool_choice"))
    request_id = new_id()
    events = _events(service, job)
    if chat.stream:
        try:
            first = await events.__anext__()  # a full queue is still a plain 503, not a broken stream
        except RequestError as error:
            return _error(error)
        if isinstance(first, Done) and first.error is not None:
            await events.aclose()
            return JSONResponse(error_body(first.error, kind="server_error"), status_code=500)
        return StreamingResponse(_sse(service, chat, request_id, first, events), media_type="text/event-stream")
    content, reasoning, calls = "", "", []
    done = Done("error", len(job.prompt_ids), 0, "the generation ended without a result")
    try:
        async for event in events:
            if isinstance(event, ContentEvent):
                content += event.text
            elif isinstance(event, ReasoningEvent):
                reasoning += event.text
            elif isinstance(event, CallEvent):
                calls.append(event.call)
            else:
                done = event
    except RequestError as error:
        return _error(error)
    if done.error is not None:
        return JSONResponse(error_body(done.error, kind="server_error"), status_code=500)
    return JSONResponse(completion(request_id, service.model_id, content, calls, done.finish_reason,
                                   done.prompt_tokens, done.completion_tokens, reasoning=reasoning))


async def _sse(service: Service, chat: ChatRequest, request_id: str, first: Event | Done,
               rest: AsyncGenerator[Event | Done, None]) -> AsyncIterator[str]:
    """Server-sent events as OpenAI streams them: role, content or call deltas, the finish, usage."""
    try:
        async for text in _sse_lines(service.model_id, chat, request_id, first, rest):
            yield text
    finally:
        await rest.aclose()  # a client that left stops its job at the next token


async def _sse_lines(model: str, chat: ChatRequest, request_id: str, first: Event | Done,
                     rest: AsyncIterator[Event | Done]) -> AsyncIterator[str]:

    def line(body: dict[str, Any]) -> str:
        return f"data: {json.dumps(body, ensure_ascii=False)}\n\n"

    yield line(chunk(request_id, model, {"role": "assistant", "content": ""}))
    event: Event | Done = first
    while True:
        if isinstance(event, ContentEvent):
            yield line(chunk(request_id, model, {"content": event.text}))
        elif isinstance(event, ReasoningEvent):
            yield line(chunk(request_id, model, {"reasoning_content": event.text}))
        elif isinstance(event, CallEvent):
            for delta in call_deltas(event.index, event.call):
                yield line(chunk(request_id, model, delta))
        else:
            if event.error is not None:
                yield line(error_body(event.error, kind="server_error"))
            else:
                yield line(chunk(request_id, model, {}, event.finish_reason))
                if chat.include_usage:
                    yield line(chunk(request_id, model, None, usage_=usage(event.prompt_tokens,
                                                                            event.completion_tokens)))
            yield "data: [DONE]\n\n"
            return
        event = await rest.__anext__()


async def models(request: Request) -> Response:
    service: Service = request.app.state.service
    return JSONResponse({"object": "list", "data": [
        {"id": service.model_id, "object": "model", "created": service.started, "owned_by": "tooldec"}]})


async def health(request: Request) -> Response:
    service: Service = request.app.state.service
    alive = service.worker.is_alive()
    worker = service.worker
    return JSONResponse({"status": "ok" if alive else "worker stopped", "waiting": worker.waiting,
                         "served": worker.jobs_done, "tokens": worker.tokens_generated,
                         "masking_seconds": worker.masking_seconds, "refused": dict(worker.refusals)},
                        status_code=200 if alive else 503)


async def _not_found(request: Request, exc: Exception) -> Response:
    return JSONResponse(error_body(f"no route {request.method} {request.url.path}"), status_code=404)


async def _not_allowed(request: Request, exc: Exception) -> Response:
    return JSONResponse(error_body(f"{request.method} is not allowed on {request.url.path}"), status_code=405)


def create_app(service: Service) -> Starlette:
    """The app; the worker thread starts with it and stops with it."""

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        service.worker.start()
        yield
        await to_thread.run_sync(service.worker.stop)

    app = Starlette(routes=[
        Route("/v1/chat/completions", chat_completions, methods=["POST"]),
        Route("/v1/models", models, methods=["GET"]),
        Route("/health", health, methods=["GET"]),
    ], exception_handlers={404: _not_found, 405: _not_allowed}, lifespan=lifespan)
    app.state.service = service
    return app
