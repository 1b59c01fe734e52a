"""The OpenAI Chat Completions wire format: requests checked field by field, responses built. A
field ``tooldec serve`` would ignore in a way that changes the answer (``n`` > 1, ``stop``, a JSON
``response_format``) is refused with a 400 naming it, not dropped."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..dialects import ToolCall

__all__ = ["MAX_DEPTH", "ChatRequest", "RequestError", "chunk", "completion", "decode_body", "error_body",
           "parse_request"]

MAX_DEPTH = 64
"""Deepest nesting of arrays and objects a request body may have: room for tool schemas nested
some 30 levels, far from where the parser, the schema compiler or the chat template would run out
of stack."""

_ROLES = ("system", "developer", "user", "assistant", "tool")
_REFUSED: dict[str, Callable[[Any], bool]] = {
    "n": lambda v: v not in (None, 1),
    "stop": lambda v: v not in (None, [], ""),
    "logprobs": lambda v: bool(v),
    "top_logprobs": lambda v: v not in (None, 0),
    "audio": lambda v: v is not None,
    "response_format": lambda v: v not in (None, {"type": "text"}),
}


class RequestError(Exception):
    """A request the server refuses, with the HTTP status and the offending field."""

    def __init__(self, message: str, *, param: str | None = None, status: int = 400,
                 code: str | None = None, retry_after: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.param = param
        self.status = status
        self.code = code
        self.retry_after = retry_after


def error_body(message: str, *, param: str | None = None, code: str | None = None,
               kind: str = "invalid_request_error") -> dict[str, Any]:
    """OpenAI's error object: ``{"error": {"message", "type", "param", "code"}}``."""
    return {"error": {"message": message, "type": kind, "param": param, "code": code}}


def decode_body(data: bytes, max_depth: int = MAX_DEPTH) -> Any:
    """A request body's JSON, nested at most ``max_depth`` deep, else a :class:`RequestError`.

    Examples:
        >>> decode_body(b'{"a": [1, {"b": null}]}', max_depth=3)
        {'a': [1, {'b': None}]}
        >>> decode_body(b'[[[[]]]]', max_depth=3)
        Traceback (most recent call last):
        ...
        tooldec.serving.protocol.RequestError: the request body nests arrays and objects deeper than 3 levels
    """
    deep = RequestError(f"the request body nests arrays and objects deeper than {max_depth} levels")
    try:
        value = json.loads(data)
    except RecursionError:  # deeper than the parser's own stack allows
        raise deep from None
    except ValueError as error:  # not JSON, not UTF-8, an integer of thousands of digits
        raise RequestError(f"the request body is not valid JSON: {error}") from None
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        if children is None:
            continue
        if depth > max_depth:
            raise deep
        stack.extend((child, depth + 1) for child in children)
    return value


@dataclass(frozen=True)
class ChatRequest:
    """A checked ``POST /v1/chat/completions`` body."""

    model: str
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] = field(default_factory=list)
    tool_choice: str = "auto"
    parallel_tool_calls: bool = True
    max_tokens: int | None = None
    temperature: float = 1.0
    seed: int | None = None
    stream: bool = False
    include_usage: bool = False


def _number(body: Mapping[str, Any], name: str, default: float, low: float, high: float) -> float:
    value = body.get(name)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
        raise RequestError(f"{name} must be a number from {low} to {high}, got {value!r}", param=name)
    return float(value)


def _tool_choice(value: Any, tools: Sequence[Mapping[str, Any]]) -> str:
    """``"auto"``, ``"required"``, ``"none"`` or the name in ``{"type": "function", "function": {"name"}}``."""
    if value is None:
        return "auto" if tools else "none"
    if value in ("auto", "required", "none"):
        if value == "required" and not tools:
            raise RequestError("tool_choice 'required' needs at least one tool in 'tools'", param="tool_choice")
        return str(value)
    if isinstance(value, Mapping) and value.get("type") == "function" and isinstance(value.get("function"), Mapping):
        name = value["function"].get("name")
        if isinstance(name, str):
            return name
    raise RequestError("tool_choice must be 'auto', 'required', 'none' or "
                       "{'type': 'function', 'function': {'name': ...}}", param="tool_choice")


def _messages(value: Any) -> list[dict[str, Any]]:
    if not isinstance(value, list) or not value:
        raise RequestError("messages must be a non-empty list", param="messages")
    for i, message in enumerate(value):
        if not isinstance(message, dict) or message.get("role") not in _ROLES:
            raise RequestError(f"messages[{i}] must be an object whose role is one of {', '.join(_ROLES)}",
                               param=f"messages[{i}]")
        for name in ("name", "tool_call_id"):
            if message.get(name) is not None and not isinstance(message[name], str):
                raise RequestError(f"messages[{i}].{name} must be a string", param=f"messages[{i}].{name}")
        _content(message.get("content"), f"messages[{i}].content")
        _tool_calls(message.get("tool_calls"), f"messages[{i}].tool_calls")
    return [dict(m) for m in value]


def _content(value: Any, where: str) -> None:
    """A message's content: text, or text parts. Another part (``image_url``, ...) is refused by
    type and index: dropping it would answer a question the client did not ask."""
    if value is None or isinstance(value, str):
        return
    if not isinstance(value, list):
        raise RequestError(f"{where} must be a string or a list of content parts", param=where)
    for j, part in enumerate(value):
        kind = part.get("type") if isinstance(part, dict) else None
        if kind != "text":
            named = f"of type {kind!r}" if isinstance(kind, str) else "not a content part"
            raise RequestError(f"{where}[{j}] is {named}; this model reads text parts only",
                               param=f"{where}[{j}]")
        if not isinstance(part.get("text"), str):
            raise RequestError(f"{where}[{j}].text must be a string", param=f"{where}[{j}].text")


def _tool_calls(value: Any, where: str) -> None:
    """An assistant message's ``tool_calls``: a string ``function.name``, arguments a string or object."""
    if value is None:
        return
    if not isinstance(value, list):
        raise RequestError(f"{where} must be a list", param=where)
    for j, call in enumerate(value):
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            raise RequestError(f"{where}[{j}] must be an object whose function has a string name",
                               param=f"{where}[{j}]")
        if not isinstance(function.get("arguments", ""), (str, dict)) or not isinstance(call.get("id", ""), str):
            raise RequestError(f"{where}[{j}]: function.arguments must be a JSON string and id a string",
                               param=f"{where}[{j}]")


def parse_request(body: Any, model: str) -> ChatRequest:
    """Check a decoded request body against what the server does: a :class:`RequestError` naming
    the first bad field (a ``model`` other than the served one is a 404)."""
    if not isinstance(body, dict):
        raise RequestError("the request body must be a JSON object")
    if body.get("model") != model:
        raise RequestError(f"the model {body.get('model')!r} does not exist; this server serves {model!r}",
                           param="model", status=404, code="model_not_found")
    for name, refused in _REFUSED.items():
        if refused(body.get(name)):
            raise RequestError(f"{name}={body[name]!r} is not supported by tooldec serve", param=name)
    messages = _messages(body.get("messages"))
    tools = body.get("tools") or []
    if not isinstance(tools, list):
        raise RequestError("tools must be a list of tool definitions", param="tools")
    limit = body.get("max_completion_tokens", body.get("max_tokens"))
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise RequestError(f"max_tokens must be a positive integer, got {limit!r}", param="max_tokens")
    seed = body.get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise RequestError(f"seed must be an integer, got {seed!r}", param="seed")
    parallel = body.get("parallel_tool_calls", True)
    if not isinstance(parallel, bool):
        raise RequestError("parallel_tool_calls must be a boolean", param="parallel_tool_calls")
    stream = body.get("stream", False)
    options = body.get("stream_options") or {}
    if not isinstance(stream, bool) or not isinstance(options, dict):
        raise RequestError("stream must be a boolean and stream_options an object", param="stream")
    _number(body, "top_p", 1.0, 1.0, 1.0)  # sampling reads the whole distribution
    return ChatRequest(
        model=model, messages=messages, tools=tools, tool_choice=_tool_choice(body.get("tool_choice"), tools),
        parallel_tool_calls=parallel, max_tokens=limit, temperature=_number(body, "temperature", 1.0, 0.0, 2.0),
        seed=seed, stream=stream, include_usage=bool(options.get("include_usage")))


def new_id() -> str:
    """A completion id in OpenAI's shape."""
    return f"chatcmpl-{uuid.uuid4().hex[:24]}"


def completion(request_id: str, model: str, content: str, calls: Sequence[ToolCall], finish: str,
               prompt_tokens: int, completion_tokens: int, *, reasoning: str = "") -> dict[str, Any]:
    """A ``chat.completion`` object (non-streaming answer); the reasoning, if any, as
    ``reasoning_content`` (vLLM's and DeepSeek's field)."""
    message: dict[str, Any] = {"role": "assistant", "content": content or None}
    if reasoning:
        message["reasoning_content"] = reasoning
    if calls:
        message["tool_calls"] = [c.to_openai() for c in calls]
    return {
        "id": request_id, "object": "chat.completion", "created": int(time.time()), "model": model,
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish}],
        "usage": usage(prompt_tokens, completion_tokens),
    }


def usage(prompt_tokens: int, completion_tokens: int) -> dict[str, int]:
    return {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens}


def chunk(request_id: str, model: str, delta: dict[str, Any] | None, finish: str | None = None,
          usage_: dict[str, int] | None = None) -> dict[str, Any]:
    """A ``chat.completion.chunk``: one delta, or (``delta`` None) the usage chunk with no choices."""
    body: dict[str, Any] = {"id": request_id, "object": "chat.completion.chunk", "created": int(time.time()),
                            "model": model}
    body["choices"] = [] if delta is None else [{"index": 0, "delta": delta, "logprobs": None,
                                                 "finish_reason": finish}]
    if usage_ is not None:
        body["usage"] = usage_
    return body


def call_deltas(index: int, call: ToolCall) -> list[dict[str, Any]]:
    """The deltas OpenAI streams for one call: id, type and name with empty arguments, then the arguments."""
    whole = call.to_openai()
    return [
        {"tool_calls": [{"index": index, "id": whole["id"], "type": "function",
                         "function": {"name": call.name, "arguments": ""}}]},
        {"tool_calls": [{"index": index, "function": {"arguments": whole["function"]["arguments"]}}]},
    ]
