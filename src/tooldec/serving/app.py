"""``tooldec serve``'s HTTP surface: an OpenAI-compatible Starlette app over one llama.cpp model
(routes, errors and limits: docs/serving.md). A client's fault is a 4xx in OpenAI's error object;
only the server's own faults are 5xx."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
import threading
import time
from collections import Counter
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from anyio import to_thread
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from ..errors import BudgetError, ToolDecError, ToolNotFoundError
from ..tools import ToolSet
from .access import ApiKey
from .assemble import CallEvent, ContentEvent, Event, ReasoningEvent
from .engine import Constraints
from .metrics import CONTENT_TYPE, metrics_text
from .prompt import render_prompt
from .protocol import (
    ChatRequest,
    RequestError,
    call_deltas,
    chunk,
    completion,
    decode_body,
    error_body,
    new_id,
    parse_request,
    usage,
)
from .worker import Done, Job, QueueFull, Worker

__all__ = ["Service", "Settings", "create_app"]

DEFAULT_MAX_TOKENS = 512
T = TypeVar("T")


@dataclass(frozen=True)
class Settings:
    """How much the server takes from one client: the largest body read (a larger one is a 413
    before it is parsed), and the seconds a request may take, queued and generating (then a 503;
    ``None``: no limit)."""

    max_body_bytes: int = 16 * 2**20
    request_timeout: float | None = None


class Service:
    """What the routes share: the model's name (``model_id``, what clients put in ``model``), its
    tokenizer, the worker that runs it (started by the app), the ``constraints`` that compile
    request tools (shared: docs/DESIGN.md, concurrency contract) and the limits on each client."""

    def __init__(self, model_id: str, tokenizer: Any, worker: Worker, constraints: Constraints,
                 settings: Settings | None = None) -> None:
        self.model_id = model_id
        self.tokenizer = tokenizer
        self.worker = worker
        self.constraints = constraints
        self.settings = settings or Settings()
        self.started = int(time.time())
        self.answered: Counter[int] = Counter()  # chat completion requests by HTTP status (event loop only)
        self.refused: Counter[str] = Counter()  # refused requests by error code

    def prepare(self, request: ChatRequest) -> Job:
        """Compile the tools and render the prompt (on a thread: both can take a while); a
        :class:`RequestError` for a bad tool, a tool_choice naming none, or a required call that
        cannot close within max_tokens."""
        toolset = compiled = None
        if request.tools and request.tool_choice != "none":
            try:  # here, not on the worker thread, whose every running request would wait for it
                compiled = self.constraints.compile(request.tools)
            except ToolDecError as error:
                raise RequestError(f"invalid tools: {error}", param="tools") from error
            toolset = compiled.tools
            if request.tool_choice not in ("auto", "required") and request.tool_choice not in toolset:
                raise RequestError(f"tool_choice names {request.tool_choice!r}, which is not in tools: "
                                   f"{', '.join(toolset.names)}", param="tool_choice")
        from jinja2.exceptions import TemplateError

        try:
            prompt = render_prompt(self.tokenizer, request.messages, toolset, request.tools, self.constraints.dialect)
        except TemplateError as error:  # the template's own checks (roles in order, ...) refused them
            raise RequestError(f"the model's chat template refused the messages: {error}", param="messages") from error
        ids = list(self.tokenizer.encode(prompt, add_special_tokens=False))
        self._check_context(request, len(ids), toolset)
        specs = request.tools if compiled is not None else []
        job = Job(prompt_ids=ids, specs=specs, key=compiled.key if compiled is not None else "",
                  tool_choice=request.tool_choice, parallel_tool_calls=request.parallel_tool_calls,
                  max_tokens=request.max_tokens or DEFAULT_MAX_TOKENS, temperature=request.temperature,
                  seed=request.seed, emit=lambda event: None)
        budget = self.worker.budget(job)
        if compiled is not None and request.tool_choice != "auto" and budget >= 1:  # a call must come first: it must fit
            machine = self.constraints.machine(compiled, tool_choice=request.tool_choice)
            try:
                machine.check_budget(budget)
            except BudgetError as error:
                raise RequestError(str(error), param="max_tokens") from error
        return job

    def _check_context(self, request: ChatRequest, prompt: int, toolset: ToolSet | None) -> None:
        """Refuse a prompt, or a prompt and ``max_tokens``, over the context, as OpenAI does (400,
        ``context_length_exceeded``, both numbers in the message)."""
        context = self.worker.context
        if prompt >= context:
            share = ""
            if toolset is not None and len(toolset):  # how much of it the tools take
                bare = render_prompt(self.tokenizer, request.messages, None, [], self.constraints.dialect)
                tools = prompt - len(self.tokenizer.encode(bare, add_special_tokens=False))
                share = f" ({tools} of them for the {len(toolset)} tools)"
            raise RequestError(f"This model's maximum context length is {context} tokens. However, your messages "
                               f"resulted in {prompt} tokens{share}. Please reduce the length of the messages"
                               f"{' or tools' if share else ''}.", param="messages", code="context_length_exceeded")
        if request.max_tokens is not None and prompt + request.max_tokens > context:
            raise RequestError(f"This model's maximum context length is {context} tokens. However, you requested "
                               f"{prompt + request.max_tokens} tokens ({prompt} in the messages, "
                               f"{request.max_tokens} in the completion). Please reduce the length of the messages "
                               "or the completion.", param="max_tokens", code="context_length_exceeded")


def _error(error: RequestError) -> ErrorResponse:
    kind = "invalid_request_error" if error.status < 500 else "server_error"
    headers = {"Retry-After": str(error.retry_after)} if error.retry_after is not None else None
    return ErrorResponse(error_body(error.message, param=error.param, code=error.code, kind=kind),
                         status_code=error.status, headers=headers, code=error.code)


class ErrorResponse(JSONResponse):
    """An error answer that remembers its code, for ``/metrics``."""

    def __init__(self, content: Any, status_code: int, headers: dict[str, str] | None = None,
                 code: str | None = None) -> None:
        super().__init__(content, status_code=status_code, headers=headers)
        self.code = code


def _done_error(done: Done) -> RequestError:
    """The error a job that ended without an answer is answered with."""
    if done.finish_reason == "cancelled":
        return RequestError(done.error or "the request was cancelled", status=503, code="shutting_down", retry_after=1)
    return RequestError(done.error or "the generation failed", status=500)


async def _events(service: Service, job: Job) -> AsyncGenerator[Event | Done, None]:
    """Submit ``job`` and yield its events as the worker produces them; the job is cancelled when
    the consumer stops early (its client left) or the time is up (a 503; a full queue: 429)."""
    loop = asyncio.get_running_loop()
    inbox: asyncio.Queue[Event | Done] = asyncio.Queue()
    timeout = service.settings.request_timeout
    deadline = None if timeout is None else loop.time() + timeout

    def emit(event: Event | Done) -> None:
        loop.call_soon_threadsafe(inbox.put_nowait, event)

    job.emit = emit
    try:
        service.worker.submit(job)
    except QueueFull as error:
        raise RequestError(str(error), status=429, code="queue_full", retry_after=error.retry_after) from error
    try:
        while True:
            if deadline is None:
                event = await inbox.get()
            else:
                try:
                    event = await asyncio.wait_for(inbox.get(), max(0.0, deadline - loop.time()))
                except TimeoutError:
                    raise RequestError(f"the request did not finish within the server's request timeout "
                                       f"of {timeout} s", status=503, code="timeout") from None
            yield event
            if isinstance(event, Done):
                return
    finally:
        service.worker.cancel(job)  # out of the queue, or stopped after its current token; no-op once done


async def _disconnected(request: Request) -> None:
    """Return when the client closes its connection (the body was read already)."""
    while (await request.receive())["type"] != "http.disconnect":
        pass


async def read_body(request: Request, limit: int) -> bytes:
    """The request's body, refused with a 413 as soon as it is known to be over ``limit`` bytes."""
    too_large = RequestError(f"the request body is over {limit} bytes", status=413, code="request_too_large")
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise too_large
    parts, size = [], 0
    async for part in request.stream():
        size += len(part)
        if size > limit:
            raise too_large
        parts.append(part)
    return b"".join(parts)


def _service(request: Request) -> Service:
    """The app's service, once the model is loaded (a 503 while it loads, or if loading failed)."""
    service: Service | None = request.app.state.service
    if service is None:
        failed = request.app.state.failed
        raise RequestError(f"the model failed to load: {failed}" if failed else "the model is loading; retry shortly",
                           status=503, code="model_not_ready", retry_after=None if failed else 5)
    return service


async def chat_completions(request: Request) -> Response:
    try:
        service = _service(request)
    except RequestError as error:
        return _error(error)
    response = await _chat_completions(service, request)
    service.answered[response.status_code] += 1
    if isinstance(response, ErrorResponse):
        service.refused[response.code or "invalid_request"] += 1
    return response


async def _chat_completions(service: Service, request: Request) -> Response:
    try:
        body = decode_body(await read_body(request, service.settings.max_body_bytes))
        chat = parse_request(body, service.model_id)
        job = await to_thread.run_sync(service.prepare, chat)
    except RequestError as error:
        return _error(error)
    except ToolNotFoundError as error:
        return _error(RequestError(str(error), param="tool_choice"))
    request_id = new_id()
    events = _events(service, job)
    if chat.stream:
        try:  # a full queue or a timeout before the first token is still a plain error, not a broken stream
            first = await _until_disconnected(request, events.__anext__())
        except RequestError as error:
            return _error(error)
        if first is None:
            await events.aclose()
            return Response(status_code=499)  # nobody reads it
        if isinstance(first, Done) and first.error is not None:
            await events.aclose()
            return _error(_done_error(first))
        return StreamingResponse(_sse(service, chat, request_id, first, events), media_type="text/event-stream")
    try:
        answer = await _until_disconnected(request, _answer(service, job, request_id, events))
    except RequestError as error:
        return _error(error)
    return Response(status_code=499) if answer is None else answer


async def _until_disconnected(request: Request, work: Awaitable[T]) -> T | None:
    """``work``'s result, or ``None`` when the client left first (``work`` is then cancelled,
    which cancels the job)."""
    task = asyncio.ensure_future(work)
    watch = asyncio.ensure_future(_disconnected(request))
    try:
        await asyncio.wait((task, watch), return_when=asyncio.FIRST_COMPLETED)
    except BaseException:  # this handler is cancelled itself (the server stops)
        task.cancel()
        raise
    finally:
        watch.cancel()
    if not task.done():
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        return None
    return task.result()


async def _answer(service: Service, job: Job, request_id: str, events: AsyncGenerator[Event | Done, None]) -> Response:
    """The non-streamed answer, once the job is done."""
    content, reasoning, calls = "", "", []
    done = Done("error", len(job.prompt_ids), 0, "the generation ended without a result")
    async with contextlib.aclosing(events):
        async for event in events:
            if isinstance(event, ContentEvent):
                content += event.text
            elif isinstance(event, ReasoningEvent):
                reasoning += event.text
            elif isinstance(event, CallEvent):
                calls.append(event.call)
            else:
                done = event
    if done.error is not None:
        return _error(_done_error(done))
    return JSONResponse(completion(request_id, service.model_id, content, calls, done.finish_reason,
                                   done.prompt_tokens, done.completion_tokens, reasoning=reasoning))


async def _sse(service: Service, chat: ChatRequest, request_id: str, first: Event | Done,
               rest: AsyncGenerator[Event | Done, None]) -> AsyncIterator[str]:
    """Server-sent events as OpenAI streams them: role, content or call deltas, the finish, usage."""
    model = service.model_id

    def line(body: dict[str, Any]) -> str:
        return f"data: {json.dumps(body, ensure_ascii=False)}\n\n"

    try:
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
            try:
                event = await rest.__anext__()
            except RequestError as error:  # the request's time is up: said in the stream, as errors mid-stream are
                yield line(error_body(error.message, code=error.code, kind="server_error"))
                yield "data: [DONE]\n\n"
                return
    finally:
        await rest.aclose()  # a client that left stops its job at the next token


async def models(request: Request) -> Response:
    try:
        service = _service(request)
    except RequestError as error:
        return _error(error)
    return JSONResponse({"object": "list", "data": [
        {"id": service.model_id, "object": "model", "created": service.started, "owned_by": "tooldec"}]})


async def health(request: Request) -> Response:
    """200 ``ok`` when requests are served; 503 ``loading``, ``failed`` or ``worker stopped``."""
    service: Service | None = request.app.state.service
    if service is None:
        failed = request.app.state.failed
        body = {"status": "failed", "error": failed} if failed else {"status": "loading"}
        return JSONResponse(body, status_code=503)
    alive = service.worker.is_alive()
    worker = service.worker
    return JSONResponse({"status": "ok" if alive else "worker stopped", "waiting": worker.waiting,
                         "served": worker.jobs_done, "tokens": worker.tokens_generated,
                         "masking_seconds": worker.masking_seconds, "refused": dict(worker.refusals)},
                        status_code=200 if alive else 503)


async def metrics(request: Request) -> Response:
    try:
        service = _service(request)
    except RequestError as error:
        return _error(error)
    return Response(metrics_text(service.worker, service.answered, service.refused), media_type=CONTENT_TYPE)


async def _not_found(request: Request, exc: Exception) -> Response:
    return JSONResponse(error_body(f"no route {request.method} {request.url.path}"), status_code=404)


async def _not_allowed(request: Request, exc: Exception) -> Response:
    return JSONResponse(error_body(f"{request.method} is not allowed on {request.url.path}"), status_code=405)


async def _server_fault(request: Request, exc: Exception) -> Response:
    """A fault of the server's own, still in OpenAI's shape (the traceback goes to the log)."""
    return JSONResponse(error_body(f"internal error: {type(exc).__name__}", kind="server_error"), status_code=500)


def create_app(service: Service | Callable[[], Service], *, api_key: str | None = None,
               on_failure: Callable[[], None] | None = None) -> Starlette:
    """The app; the worker thread starts and stops with it. Given what loads the ``service``, the
    app answers at once, with 503 until it is loaded; ``on_failure`` is called (from the loading
    thread) if that fails. ``api_key``: every route but ``/health`` requires it."""

    def load(app: Starlette, make: Callable[[], Service]) -> None:
        try:
            loaded = make()
            loaded.worker.start()
        except Exception as error:
            app.state.failed = f"{type(error).__name__}: {error}"
            print(f"tooldec serve: error: {app.state.failed}", file=sys.stderr, flush=True)
            if on_failure is not None:
                on_failure()
            return
        app.state.service = loaded

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        if isinstance(service, Service):
            service.worker.start()
            app.state.service = service
            loader = None
        else:
            loader = threading.Thread(target=load, args=(app, service), name="tooldec-load", daemon=True)
            loader.start()
        yield
        if loader is not None:
            await to_thread.run_sync(loader.join)
        if app.state.service is not None:
            await to_thread.run_sync(app.state.service.worker.stop)

    app = Starlette(routes=[
        Route("/v1/chat/completions", chat_completions, methods=["POST"]),
        Route("/v1/models", models, methods=["GET"]),
        Route("/health", health, methods=["GET"]),
        Route("/metrics", metrics, methods=["GET"]),
    ], middleware=[Middleware(ApiKey, key=api_key)] if api_key else [],
        exception_handlers={404: _not_found, 405: _not_allowed, Exception: _server_fault}, lifespan=lifespan)
    app.state.service = None
    app.state.failed = None
    return app
