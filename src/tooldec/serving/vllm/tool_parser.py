"""The ``tooldec`` tool parser for vLLM's OpenAI server: tools sent once, calls parsed by the dialect.

``adjust_request`` copies a request's ``tools``, ``tool_choice`` and ``parallel_tool_calls`` into
``vllm_xargs["tooldec"]``, which vLLM hands the logits processor (a client's own value there is
kept). vLLM is asked for no grammar of its own (``supports_required_and_named = False``): tooldec
constrains every choice itself, and calls come back as ``tool_calls``, never as ``content``.
``TOOLDEC_DIALECT`` and ``TOOLDEC_OPENERS`` choose the format (docs/serving.md, "Inside vLLM").
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import Any

from vllm.entrypoints.generate.base.protocol import (
    DeltaFunctionCall,
    DeltaMessage,
    DeltaToolCall,
    ExtractedToolCallInformation,
    FunctionCall,
    ToolCall,
)
from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
from vllm.entrypoints.openai.responses.protocol import ResponsesRequest
from vllm.renderers.chat_utils import make_tool_call_id
from vllm.tokenizers import TokenizerLike
from vllm.tool_parsers.abstract_tool_parser import Tool, ToolParser, ToolParserManager

from ...dialects import Dialect, Hermes, get_dialect
from ...dialects import ToolCall as DialectCall
from ...dialects.watch import OpenerWatch
from .args import KEY, ToolDecArgs, opener_names

__all__ = ["ToolDecToolParser"]


def _tool_dicts(tools: Sequence[Any]) -> list[dict[str, Any]]:
    """The request's tools as plain dicts, as the client sent them (None fields dropped)."""
    out = []
    for tool in tools:
        data = tool.model_dump(exclude_none=True) if hasattr(tool, "model_dump") else dict(tool)
        out.append(data)
    return out


def _tool_names(tools: Sequence[Any]) -> list[str]:
    """The function names of a request's tools (OpenAI chat tools or Responses function tools)."""
    names = []
    for tool in tools:
        function = getattr(tool, "function", None)
        name = getattr(function, "name", None) if function is not None else getattr(tool, "name", None)
        if isinstance(name, str):
            names.append(name)
    return names


def _choice(request: ChatCompletionRequest | ResponsesRequest) -> str:
    choice = request.tool_choice
    if choice is None:
        return "auto"
    if isinstance(choice, str):
        return choice
    function = getattr(choice, "function", None)
    name = getattr(function, "name", None) or getattr(choice, "name", None)
    return str(name) if name else "auto"


def _openai_call(call: DialectCall) -> ToolCall:
    return ToolCall(id=make_tool_call_id(), type="function",
                    function=FunctionCall(name=call.name, arguments=json.dumps(dict(call.arguments), ensure_ascii=False)))


class ToolDecToolParser(ToolParser):
    """Forwards a request's tools to the tooldec logits processor and parses the calls back."""

    supports_required_and_named = False

    def __init__(self, tokenizer: TokenizerLike, tools: list[Tool] | None = None) -> None:
        super().__init__(tokenizer, tools)
        openers = opener_names(os.environ.get("TOOLDEC_OPENERS"))
        self.openers = None if openers is None else tuple(openers)
        self.dialect: Dialect = get_dialect(os.environ.get("TOOLDEC_DIALECT", Hermes.name), openers=openers)
        # every opener the dialect declares, byte-exactly; a named one (Pythonic's ``[name(``)
        # commits only on this request's tool names, as the logits processor does
        self.names = _tool_names(self.tools) if self.dialect.named_openers else None
        self.watch = OpenerWatch(self.dialect, self.names)
        self._fed = 0
        self._sent_content = 0
        self._call_start: int | None = None

    def adjust_request(self, request: ChatCompletionRequest | ResponsesRequest) -> ChatCompletionRequest | ResponsesRequest:
        """Put the request's tools into ``vllm_xargs["tooldec"]`` (the processor reads them)."""
        if not request.tools or request.tool_choice == "none":
            return request
        xargs: dict[str, Any] = dict(getattr(request, "vllm_xargs", None) or {})
        if KEY not in xargs:
            parallel = getattr(request, "parallel_tool_calls", None)
            xargs[KEY] = ToolDecArgs.parse({
                "tools": _tool_dicts(request.tools), "tool_choice": _choice(request),
                "parallel_tool_calls": True if parallel is None else bool(parallel),
                "dialect": self.dialect.name,
                "openers": None if self.openers is None else list(self.openers)}).to_json()
            request.vllm_xargs = xargs
        request.skip_special_tokens = False  # a call opener may be a special token
        return request

    def _call_offset(self, text: str) -> int | None:
        """Where the first call's opener begins in ``text`` (characters), if one completed."""
        watch = OpenerWatch(self.dialect, self.names)
        raw = text.encode()
        watch.feed(raw)
        return None if watch.call_start is None else len(raw[:watch.call_start].decode("utf-8", errors="ignore"))

    def extract_tool_calls(self, model_output: str, request: ChatCompletionRequest) -> ExtractedToolCallInformation:
        """All calls of a finished answer; content is the text before the first call."""
        calls = self.dialect.parse_calls(model_output)
        if not calls:
            return ExtractedToolCallInformation(tools_called=False, tool_calls=[], content=model_output)
        start = self._call_offset(model_output)
        content = model_output[:start] if start is not None else ""
        return ExtractedToolCallInformation(tools_called=True, tool_calls=[_openai_call(c) for c in calls],
                                            content=content or None)

    def extract_tool_calls_streaming(
        self,
        previous_text: str,
        current_text: str,
        delta_text: str,
        previous_token_ids: Sequence[int],
        current_token_ids: Sequence[int],
        delta_token_ids: Sequence[int],
        request: ChatCompletionRequest,
    ) -> DeltaMessage | None:
        """Content until a call opens (a possible opener's start held back), then each call as it
        closes: its id, type and name, and its whole arguments."""
        content = None
        if self._call_start is None:
            raw = current_text.encode()
            self.watch.feed(raw[self._fed:])
            self._fed = len(raw)
            watch = self.watch
            if watch.call_start is not None:
                self._call_start = len(raw[:watch.call_start].decode("utf-8", errors="ignore"))
            end = self._call_start if self._call_start is not None else \
                len(raw[:len(raw) - watch.held].decode("utf-8", errors="ignore"))
            if end > self._sent_content:
                content = current_text[self._sent_content:end]
                self._sent_content = end
        deltas: list[DeltaToolCall] = []
        if self._call_start is not None:
            for call in self.dialect.parse_calls(current_text[self._call_start:])[len(self.prev_tool_call_arr):]:
                index = len(self.prev_tool_call_arr)
                arguments = json.dumps(dict(call.arguments), ensure_ascii=False)
                self.prev_tool_call_arr.append({"name": call.name, "arguments": arguments})
                self.streamed_args_for_tool.append(arguments)
                self.current_tool_id = index
                deltas.append(DeltaToolCall(index=index, type="function", id=make_tool_call_id(),
                                            function=DeltaFunctionCall(name=call.name, arguments=arguments)))
        if content is None and not deltas:
            return None
        return DeltaMessage(content=content, tool_calls=deltas)


ToolParserManager.register_module(name="tooldec", module=ToolDecToolParser)
