"""vLLM's own reading of generated texts: the reference that ``benchmarks/formats.py`` checks
tooldec's call formats against. Run it with vLLM's interpreter (``.venv-vllm/bin/python``); it
imports nothing of tooldec.

It reads a JSON list of requests (a file, or stdin with ``-``), each::

    {"parser": "glm45", "reasoning_parser": "glm45" or null,
     "tokenizer": "path/to/tokenizer.json", "added": ["<arg_key>", ...],
     "tools": [OpenAI tool dicts], "tool_choice": "auto", "texts": ["...", ...]}

and prints a JSON list with, per request, per text ``{"calls": [[name, arguments], ...],
"content": ..., "reasoning": ..., "error": ...}``, each call's arguments as the JSON text vLLM
gives (vLLM starts once for all of them: its imports take a minute here). The
tokenizer is the family's ``tokenizer.json`` with ``added`` as special tokens where it lacks them
(vLLM's parsers look their markers up in the vocabulary). With a reasoning parser, the text is
split as vLLM's server splits it (the reasoning parser first, the tool parser on the content).

    .venv-vllm/bin/python benchmarks/vllm_reference.py request.json
"""

from __future__ import annotations

import ast
import json
import sys
from typing import Any


def tokenizer_of(path: str, added: list[str]) -> Any:
    """An HF tokenizer from ``tokenizer.json``, with ``added`` as special tokens where missing."""
    from transformers import PreTrainedTokenizerFast

    tokenizer = PreTrainedTokenizerFast(tokenizer_file=path)
    vocab = tokenizer.get_vocab()
    missing = [text for text in added if text not in vocab]
    if missing:
        tokenizer.add_special_tokens({"additional_special_tokens": missing}, replace_extra_special_tokens=False)
    whole = tokenizer.get_vocab()
    tokenizer.get_vocab = lambda: whole  # every parser reads it once made, and building it takes half a second
    return tokenizer


def read_all(request: dict[str, Any]) -> list[dict[str, Any]]:
    """Every text of ``request`` as vLLM's parsers read it."""
    from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest, ChatCompletionToolsParam
    from vllm.reasoning import ReasoningParserManager
    from vllm.tool_parsers import ToolParserManager

    tokenizer = tokenizer_of(request["tokenizer"], request.get("added", []))
    tools = [ChatCompletionToolsParam(**tool) for tool in request["tools"]]
    chat = ChatCompletionRequest(model="m", messages=[{"role": "user", "content": "?"}], tools=request["tools"],
                                 tool_choice=request.get("tool_choice", "auto"))
    tool_parser_cls = ToolParserManager.get_tool_parser(request["parser"])
    reasoning_cls = (ReasoningParserManager.get_reasoning_parser(request["reasoning_parser"])
                     if request.get("reasoning_parser") else None)
    out = []
    for text in request["texts"]:
        try:
            reasoning, content = None, text
            if reasoning_cls is not None:
                reasoning, content = reasoning_cls(tokenizer).extract_reasoning(text, chat)
            parser = tool_parser_cls(tokenizer, tools)  # one per text: parsers keep state
            found = parser.extract_tool_calls(content or "", chat)
            calls = [[c.function.name, c.function.arguments] for c in found.tool_calls] if found.tools_called else []
            out.append({"calls": calls, "content": found.content, "reasoning": reasoning, "error": None})
        except Exception as error:  # a parser that fails on a text read no call from it; say why
            out.append({"calls": [], "content": None, "reasoning": None, "error": f"{type(error).__name__}: {error}"})
    return out


def differs_by_design(parser: str, reasoning_parser: str | None, text: str, names: list[str],
                      opener_in_reasoning: bool) -> str | None:
    """Why vLLM reads ``text`` otherwise than tooldec (which read calls named ``names``), where
    vLLM's parser does so by design (docs/call-formats.md, "Read back by vLLM"), or ``None``."""
    if reasoning_parser in ("qwen3", "glm45") and opener_in_reasoning:
        return "opener inside reasoning: vLLM's reasoning parser ends the section there"
    if parser == "pythonic":
        if any("." in name for name in names):
            return "dotted tool name: vLLM's pythonic parser reads plain identifiers only"
        try:
            first = ast.parse(text).body[0]
        except (SyntaxError, IndexError):
            first = None
        if not isinstance(getattr(first, "value", None), ast.List):
            return "text after the list: vLLM's pythonic parser reads an output that is a Python list alone"
    if parser == "llama3_json":
        rest = text.split("<|python_tag|>", 1)[-1]
        decoder, at = json.JSONDecoder(), 0
        try:
            while True:
                at = decoder.raw_decode(rest, at)[1]
                if not rest.startswith("; ", at):
                    break
                at += 2
        except json.JSONDecodeError:
            return None
        if "{" in rest[at:]:
            return "a { after the calls: vLLM's llama3_json parser drops every call when one does not start a call"
    return None


def main(argv: list[str]) -> int:
    import logging

    logging.disable(logging.CRITICAL)  # vLLM logs every text it cannot parse; the answer says it
    source = sys.stdin if argv[1:] in ([], ["-"]) else open(argv[1], encoding="utf-8")
    with source:
        request = json.load(source)  # a list of requests
    json.dump([read_all(one) for one in request], sys.stdout, ensure_ascii=False)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
