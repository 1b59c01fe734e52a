"""``parse_calls`` on generated text (well-formed, surrounded by prose, malformed) and ``render_result``."""

from __future__ import annotations

from typing import Any

import pytest

from tooldec.dialects import Dialect, Hermes, Llama3Json, Mistral, Pythonic, ReAct, ToolCall, ToolkenGPT
from tooldec.tools import Tool

Calls = list[tuple[str, dict[str, Any]]]

POWER = Tool.from_dict({"name": "power", "parameters": {"type": "object", "properties": {
    "a": {"type": "number"}, "b": {"type": "number"}}, "required": ["a", "b"]}})
LOG = Tool.from_dict({"name": "log", "parameters": {"type": "object", "properties": {
    "x": {"type": "number"}, "base": {"type": "number"}}, "required": ["x"]}})
LCM = Tool.from_dict({"name": "lcm", "parameters": {"type": "object", "properties": {
    "numbers": {"type": "array", "items": {"type": "integer"}}}, "required": ["numbers"]}})

TABLE: list[tuple[Dialect, str, Calls]] = [
    # ToolkenGPT: the FuncQA spellings, positional values named by the tools
    (ToolkenGPT([POWER, LOG, LCM]), "6*10^2=6*<power>(10,2)=100=600", [("power", {"a": 10, "b": 2})]),
    (ToolkenGPT([POWER, LOG, LCM]), "log(98.74)=<log>(98.74)=1.99", [("log", {"x": 98.74})]),
    (ToolkenGPT([POWER, LOG, LCM]), "<log>(8, 2)=3", [("log", {"x": 8, "base": 2})]),
    (ToolkenGPT([POWER, LOG, LCM]), "<lcm>(221,172,250)=4751500.", [("lcm", {"numbers": [221, 172, 250]})]),
    (ToolkenGPT([POWER, LOG, LCM]), "<lcm>()=", [("lcm", {"numbers": []})]),
    (ToolkenGPT([POWER]), "<power>(2)=4 <power>(2, x)= <power>(2, 3", []),  # arity, not a number, open
    (ToolkenGPT([POWER]), "<power>(2, 3, 4)=", []),
    (ToolkenGPT(), "<sqrt>(16)=4 and <add>(1.5, -2e3)=", [("sqrt", {"0": 16}), ("add", {"0": 1.5, "1": -2000.0})]),
    (ToolkenGPT(), "a <b> tag, 3 < 4 and x=(1)", []),
    # ReAct: ToolBench's Thought/Action/Action Input
    (ReAct(), 'Thought: look it up\nAction: search\nAction Input: {"q": "tooldec"}\n',
     [("search", {"q": "tooldec"})]),
    (ReAct(), 'Action: search\nAction Input: {\n  "q": "pretty"\n}', [("search", {"q": "pretty"})]),  # ToolLLaMA's style
    (ReAct(), 'Action: a\nAction Input: {"x": 1}\nObservation: 2\nThought: again\nAction: b\nAction Input: {}\n',
     [("a", {"x": 1}), ("b", {})]),
    (ReAct(), 'Action: search\nAction Input: {"q": "unclosed\n', []),
    (ReAct(), 'Action: search\nAction Input: "just a string"\n', []),
    (ReAct(), 'Action: \nAction Input: {"q": 1}\n', []),
    # Llama 3.1 JSON
    (Llama3Json(), '{"name": "f", "parameters": {"a": 1}}', [("f", {"a": 1})]),
    (Llama3Json(), '<|python_tag|>{"name": "f", "parameters": {}}<|eom_id|>', [("f", {})]),
    (Llama3Json(), 'Sure. {"name":"f","arguments":{"a":[1, 2]}} and {"name": "g", "parameters": {"b": null}}',
     [("f", {"a": [1, 2]}), ("g", {"b": None})]),
    (Llama3Json(), '{"name": "f", "parameters": {"a": 1}', []),
    (Llama3Json(), '{"name": "f", "parameters": "a=1"} {"name": 3, "parameters": {}}', []),
    # Mistral v3
    (Mistral(), '[TOOL_CALLS] [{"name": "f", "arguments": {"a": 1}}, {"name": "g", "arguments": {}}]',
     [("f", {"a": 1}), ("g", {})]),
    (Mistral(), '[TOOL_CALLS][{"name": "f", "arguments": {"a": 1}, "id": "abcdefghi"}]', [("f", {"a": 1})]),
    (Mistral(), '[TOOL_CALLS] [{"name": "f", "arguments": {"a": 1}}', []),  # unclosed list
    (Mistral(openers=["tag"]), '[{"name": "f", "arguments": {"a": 1}}]', []),  # no trigger
    (Mistral(), '[{"name": "f", "arguments": {"a": 1}}]', [("f", {"a": 1})]),  # a bare list of calls
    (Mistral(), '[TOOL_CALLS] [{"name": "f", "arguments": "x"}, {"arguments": {}}, {"name": "g"}]', [("g", {})]),
    # pythonic
    (Pythonic(), '[get_weather(city="San Francisco", metric="celsius"), get_time()]',
     [("get_weather", {"city": "San Francisco", "metric": "celsius"}), ("get_time", {})]),
    (Pythonic(), "[f(a=[1, 2], b={'k': (3, 4)}, c=None, d=True, e=-1.5)]",
     [("f", {"a": [1, 2], "b": {"k": [3, 4]}, "c": None, "d": True, "e": -1.5})]),
    (Pythonic(), 'See [the docs](http://x) then [a.b.c(x="]")]', [("a.b.c", {"x": "]"})]),
    (Pythonic(), "[f(1)] [f(a=g())] [f(a={1, 2})] [f(**k)] [f(a=1)", []),
    (Pythonic(), "[1, 2] [f, g()] []", []),
    # Hermes
    (Hermes(), '<tool_call>\n{"name": "f", "arguments": {"a": "x"}}\n</tool_call>', [("f", {"a": "x"})]),
    (Hermes(), '<tool_call>\n{"name": "f", "arguments": {"a": </tool_call>', []),
    # a last call left unclosed at the end of the output (Qwen does this), as vLLM's parser reads it
    (Hermes(), '<tool_call>\n{"name": "f", "arguments": {}}\n</tool_call>\n<tool_call>\n{"name": "g", "arguments": {}}\n',
     [("f", {}), ("g", {})]),
    (Hermes(), '<tool_call>\n{"name": "f", "arguments": {}}}', []),
    (Hermes(), '<tool_call>\n{"name": "f", "arguments": {"a": 1', []),
]


@pytest.mark.parametrize(("dialect", "text", "expected"), TABLE)
def test_parse_calls(dialect: Dialect, text: str, expected: Calls) -> None:
    calls = dialect.parse_calls(text)
    assert [(c.name, dict(c.arguments)) for c in calls] == expected


def test_mistral_ids_are_kept_or_made() -> None:
    text = '[TOOL_CALLS] [{"name": "f", "arguments": {}, "id": "a1b2c3d4e"}, {"name": "g", "arguments": {}, "id": "bad"}]'
    kept, made = Mistral().parse_calls(text)
    assert kept.id == "a1b2c3d4e"
    assert len(made.id) == 9 and made.id.isalnum() and made.id.isascii()


@pytest.mark.parametrize(
    ("dialect", "result", "expected"),
    [
        (ToolkenGPT(), " 125.6\n", "125.6"),
        (ReAct(), '{"temp": 21}', 'Observation: {"temp": 21}\n'),
        (Llama3Json(), '{"temp": 21}', '{"temp": 21}'),
        (Pythonic(), "sunny", "sunny"),
        (Hermes(), "sunny", "<tool_response>\nsunny\n</tool_response>"),
        (Mistral(), '{"temp": 21}', '[TOOL_RESULTS] {"content": {"temp": 21}, "call_id": "abcdefghi"}[/TOOL_RESULTS]'),
        (Mistral(), "sunny", '[TOOL_RESULTS] {"content": "sunny", "call_id": "abcdefghi"}[/TOOL_RESULTS]'),
    ],
)
def test_render_result(dialect: Dialect, result: str, expected: str) -> None:
    assert dialect.render_result(ToolCall("f", {}, id="abcdefghi"), result) == expected


@pytest.mark.parametrize("dialect", [ReAct(), ToolkenGPT()])
def test_formats_that_run_the_tool_mid_text_stop_after_the_call(dialect: Dialect) -> None:
    assert dialect.stop_after_call


def test_toolkengpt_format_call_refuses_non_numbers() -> None:
    with pytest.raises(ValueError, match="numbers only"):
        ToolkenGPT().format_call(ToolCall("f", {"a": "x"}))
