"""The prompt of a chat request through the model's chat template: a template that takes
``tools=`` gets the tools as sent and the history's calls structured; one that does not (SmolLM2's)
gets them as text in the dialect's own form, so the model sees what it would write."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ..dialects import Dialect, ToolCall
from ..runtime.loop import add_instructions, takes_tools
from ..tools import ToolSet

__all__ = ["render_prompt"]


def _text(content: Any) -> str:
    """A message's content as text (OpenAI also allows a list of ``{"type": "text"}`` parts)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, Mapping) and p.get("type") == "text")
    return str(content)


def _arguments(value: Any) -> dict[str, Any]:
    if isinstance(value, str):
        try:
            value = json.loads(value) if value.strip() else {}
        except json.JSONDecodeError:
            return {}
    return dict(value) if isinstance(value, Mapping) else {}


def _calls(message: Mapping[str, Any]) -> list[ToolCall]:
    calls = []
    for item in message.get("tool_calls") or []:
        function = (item.get("function") or {}) if isinstance(item, Mapping) else {}
        name = function.get("name")
        if isinstance(name, str):
            calls.append(ToolCall(name, _arguments(function.get("arguments")), id=str(item.get("id") or "")))
    return calls


def _messages(messages: Sequence[Mapping[str, Any]], dialect: Dialect, structured: bool) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    names: dict[str, str] = {}
    for message in messages:
        role = "system" if message["role"] == "developer" else str(message["role"])
        content = _text(message.get("content"))
        calls = _calls(message) if role == "assistant" else []
        names.update({c.id: c.name for c in calls})
        if structured:
            item: dict[str, Any] = {"role": role, "content": content}
            if calls:
                item["tool_calls"] = [{"id": c.id, "type": "function",
                                       "function": {"name": c.name, "arguments": dict(c.arguments)}} for c in calls]
            if role == "tool":
                item["tool_call_id"] = message.get("tool_call_id")
                item["name"] = message.get("name") or names.get(str(message.get("tool_call_id")), "")
            out.append(item)
        elif calls:
            written = "\n".join(dialect.format_call(c) for c in calls)
            out.append({"role": role, "content": f"{content}\n{written}" if content else written})
        elif role == "tool":
            call = ToolCall(names.get(str(message.get("tool_call_id")), str(message.get("name") or "")), {})
            out.append({"role": "tool", "content": dialect.render_result(call, content)})
        else:
            out.append({"role": role, "content": content})
    return out


def render_prompt(tokenizer: Any, messages: Sequence[Mapping[str, Any]], tools: ToolSet | None,
                  specs: Sequence[Mapping[str, Any]], dialect: Dialect) -> str:
    """The prompt text for the next assistant message; ``tools``: the request's validated tools
    (``None``: none), ``specs``: the same as the client sent them."""
    structured = takes_tools(tokenizer)
    chat = _messages(messages, dialect, structured)
    if tools is not None and len(tools) and not structured:
        add_instructions(chat, tools, dialect)
    kwargs: dict[str, Any] = {"tools": list(specs)} if structured and tools is not None and len(tools) else {}
    return str(tokenizer.apply_chat_template(chat, add_generation_prompt=True, tokenize=False, **kwargs))
