"""A second process that sends N concurrent chat requests to a server (for the load test).

Each request gets its own tool list (two base tools plus numbered distractors) and, every other
one, ``tool_choice="required"``. Every call is validated against its tool's schema here; the
results (one record per request) are written as JSON.

Usage: python tests/serving/load_client.py --base-url URL --model ID --requests 50 --out FILE
"""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path
from typing import Any

import jsonschema
import openai

ADD = {"type": "function", "function": {"name": "add", "description": "Add two integers.", "parameters": {
    "type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}, "required": ["a", "b"]}}}


def tools_for(index: int) -> list[dict[str, Any]]:
    extra = [{"type": "function", "function": {"name": f"lookup_{index}_{k}", "description": f"Look up record {k}.",
                                               "parameters": {"type": "object", "properties": {
                                                   "key": {"type": "string", "maxLength": 12}}, "required": ["key"]}}}
             for k in range(index % 5 + 1)]
    return [ADD, *extra]


async def one(client: openai.AsyncOpenAI, model: str, index: int, max_tokens: int) -> dict[str, Any]:
    tools = tools_for(index)
    record: dict[str, Any] = {"index": index, "tools": tools, "calls": [], "valid": True, "error": None}
    try:
        answer = await client.chat.completions.create(
            model=model, messages=[{"role": "user", "content": f"What is {index} plus {index * 3}?"}],
            tools=tools, tool_choice="required" if index % 2 == 0 else "auto",  # type: ignore[arg-type]
            max_tokens=max_tokens, temperature=0)
    except openai.OpenAIError as error:
        record["error"] = f"{type(error).__name__}: {error}"
        return record
    schemas = {t["function"]["name"]: t["function"]["parameters"] for t in tools}
    message = answer.choices[0].message
    for call in message.tool_calls or []:
        arguments = json.loads(call.function.arguments)
        record["calls"].append((call.function.name, arguments))
        try:
            jsonschema.validate(arguments, schemas[call.function.name])
        except (KeyError, jsonschema.ValidationError):
            record["valid"] = False
    if index % 2 == 0 and not message.tool_calls:
        record["valid"] = False
    if "<tool_call>" in (message.content or ""):
        record["valid"] = False
    return record


async def run(base_url: str, model: str, requests: int, max_tokens: int) -> list[dict[str, Any]]:
    client = openai.AsyncOpenAI(base_url=base_url, api_key="unused", max_retries=0, timeout=1800)
    return list(await asyncio.gather(*(one(client, model, i, max_tokens) for i in range(requests))))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--requests", type=int, default=50)
    parser.add_argument("--max-tokens", type=int, default=48)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    args.out.write_text(json.dumps(asyncio.run(run(args.base_url, args.model, args.requests, args.max_tokens))))


if __name__ == "__main__":
    main()
