"""The auto-mode benchmark's counting (docs/DESIGN.md, invariant 3), on a real BFCL item and hand-written answers.

Every system is counted by the same ``Hermes().scan``: a tooldec loop's calls are the ones parsed
in its text; a server's are its ``tool_calls``, and call-like text in its ``content`` is broken.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from benchmarks.paper.datasets import bfcl_items
from benchmarks.paper.experiments.auto_mode import count_answer, request, summarize
from tooldec.dialects import Hermes

TAYLOR = '{"name": "spotify.play", "arguments": {"artist": "Taylor Swift", "duration": 20}}'
MAROON = '{"name": "spotify.play", "arguments": {"artist": "Maroon 5", "duration": 15}}'


@pytest.fixture(scope="module")
def parallel_0(data_dir: Path) -> Any:
    """BFCL parallel_0: two calls to ``spotify.play`` (Taylor Swift 20, Maroon 5 15)."""
    item = next(i for i in bfcl_items("parallel", data_dir) if i["id"] == "parallel_0")
    return request(item, "parallel")


def test_request_maps_bfcl_types_and_keeps_the_gold(parallel_0: Any) -> None:
    (tool,) = parallel_0.openai_tools()
    assert tool["type"] == "function" and tool["function"]["name"] == "spotify.play"
    assert tool["function"]["parameters"]["type"] == "object"  # BFCL writes "dict"
    assert parallel_0.messages[0]["role"] == "user" and "Maroon 5" in parallel_0.messages[0]["content"]
    assert len(parallel_0.ground_truth) == 2
    assert "spotify.play" in parallel_0.toolset()


@pytest.mark.parametrize(
    ("text", "parsed", "broken", "correct"),
    [
        (f"<tool_call>\n{TAYLOR}\n</tool_call>\n<tool_call>\n{MAROON}\n</tool_call>", 2, 0, True),
        (f"Sure:\n```json\n{TAYLOR}\n```\nand\n```json\n{MAROON}\n```", 2, 0, True),  # fenced: a call
        (f"{TAYLOR}\n{MAROON}", 2, 0, True),  # bare objects at line starts
        (f"<tool_call>\n{TAYLOR}\n</tool_call>", 1, 0, False),  # one of two
        ('<tool_call>\n{"name": "spotify.play", "arguments": {"artist": "Tay', 0, 1, False),  # truncated
        ('{"name": "spotify.play", "description": "Play"}', 0, 1, False),  # no arguments
        ('Use this: {"name": "spotify.play", "arguments": {}}', 1, 0, False),  # mid-line: an inline call
        (f"```python\ndef play():\n    return {TAYLOR}\n```", 1, 0, False),  # returned in code: a call
        ('```json\n{"type": "function", "function": ' + TAYLOR + "}\n```\n"
         '{"type": "function", "function": ' + MAROON + "}", 2, 0, True),  # the OpenAI tool shape
        ('```json\n{"type": "function", "function": {"name": "spotify.play", "parameters": {"type": "obj', 0, 1,
         False),  # truncated: one broken call, not two
        ("I cannot play songs; my name is {not} JSON.", 0, 0, False),
    ],
)
def test_a_loop_answer_is_counted_by_scan(parallel_0: Any, text: str, parsed: int, broken: int,
                                          correct: bool) -> None:
    row = count_answer(parallel_0, Hermes(), parallel_0.toolset(), text)
    assert (row["calls_parsed"], row["broken"], row["correct"]) == (parsed, broken, correct)
    assert row["calls_made"] == parsed + broken


def test_a_server_answer_counts_tool_calls_and_call_like_content(parallel_0: Any) -> None:
    tools = parallel_0.toolset()
    returned = [{"id": "a", "function": {"name": "spotify.play", "arguments": '{"artist": "Taylor Swift", "duration": 20}'}},
                {"id": "b", "function": {"name": "spotify.play", "arguments": '{"duration": 15, "artist": "Maroon 5"}'}}]
    good = count_answer(parallel_0, Hermes(), tools, "", returned)
    assert (good["calls_parsed"], good["broken"], good["correct"]) == (2, 0, True)
    # the same calls left in content: a client gets text, so both are broken and nothing is parsed
    in_content = count_answer(parallel_0, Hermes(), tools, f"```json\n{TAYLOR}\n```\n```json\n{MAROON}\n```", [])
    assert (in_content["calls_parsed"], in_content["broken"], in_content["correct"]) == (0, 2, False)
    undecodable = count_answer(parallel_0, Hermes(), tools, "", [{"function": {"name": "spotify.play",
                                                                               "arguments": "{oops"}}])
    assert (undecodable["calls_parsed"], undecodable["broken"]) == (0, 1)


def test_invalid_calls_are_parsed_but_flagged(parallel_0: Any) -> None:
    text = '<tool_call>\n{"name": "spotify.play", "arguments": {"artist": "X"}}\n</tool_call>'  # duration missing
    row = count_answer(parallel_0, Hermes(), parallel_0.toolset(), text)
    assert (row["calls_parsed"], row["invalid"], row["correct"]) == (1, 1, False)


def test_irrelevance_is_correct_only_without_any_call(data_dir: Path) -> None:
    req = request(next(iter(bfcl_items("irrelevance", data_dir))), "irrelevance")
    tools, name = req.toolset(), req.specs[0]["name"]
    assert req.ground_truth is None
    assert count_answer(req, Hermes(), tools, "The area is 25 square meters.")["correct"] is True
    assert count_answer(req, Hermes(), tools, f'```json\n{{"name": "{name}", "argu')["correct"] is False
    assert count_answer(req, Hermes(), tools, "", [{"function": {"name": name, "arguments": "{}"}}])["correct"] is False


def test_summarize_splits_call_categories_from_irrelevance() -> None:
    rows = [
        {"category": "simple_python", "correct": True, "calls_made": 1, "calls_parsed": 1, "broken": 0,
         "invalid": 0, "tokens": 30, "seconds": 1.0},
        {"category": "parallel", "correct": False, "calls_made": 2, "calls_parsed": 0, "broken": 2,
         "invalid": 0, "tokens": 50, "seconds": 2.0},
        {"category": "irrelevance", "correct": True, "calls_made": 0, "calls_parsed": 0, "broken": 0,
         "invalid": 0, "tokens": 20, "seconds": 1.0},
    ]
    summary = summarize(rows)
    assert summary["ast_accuracy"] == 0.5 and summary["irrelevance_accuracy"] == 1.0
    assert summary["ast_simple_python"] == 1.0 and summary["ast_parallel"] == 0.0
    assert (summary["calls_made"], summary["calls_parsed"], summary["broken"], summary["answers_with_broken"]) == (3, 1, 2, 1)
    assert summary["tokens_per_second"] == 25.0


def _bench_script() -> Any:
    """``benchmarks/auto_mode.py`` as a module (it is a script, not part of the package)."""
    import importlib.util

    path = Path(__file__).resolve().parents[2] / "benchmarks" / "auto_mode.py"
    spec = importlib.util.spec_from_file_location("auto_mode_script", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_report_common_compares_systems_on_the_same_items(tmp_path: Path) -> None:
    """A run stopped part-way leaves systems with different items: ``common`` keeps the shared ones."""
    import json

    def record(item: str, correct: bool) -> str:
        return json.dumps({"id": item, "category": "simple_python", "correct": correct, "calls_made": 1,
                           "calls_parsed": 1, "broken": 0, "invalid": 0, "tokens": 10, "seconds": 1.0}) + "\n"

    folder = tmp_path / "m"
    folder.mkdir()
    (folder / "tooldec.jsonl").write_text(record("a", True) + record("b", True) + record("c", False))
    (folder / "unconstrained.jsonl").write_text(record("a", False) + record("b", True))
    script = _bench_script()
    every = script.report(tmp_path)
    assert "| m | tooldec | 3 |" in every and "| m | unconstrained | 2 |" in every
    shared = script.report(tmp_path, common=True)
    assert "| m | tooldec | 2 | 2 | 2 | 0 | 0 | 0 | 1 |" in shared
    assert "| m | unconstrained | 2 | 2 | 2 | 0 | 0 | 0 | 0.5 |" in shared


def test_end_to_end_a_call_returned_in_code_is_constrained_and_valid(data_dir: Path) -> None:
    """SmolLM2 (llama.cpp, greedy) answers BFCL simple_python_4 with Python code that returns a
    ``{"name": ...}`` object: no tag, no fence, no line start. Auto mode constrains it (the
    ``inline`` opener), so it is a parsed, valid call and nothing call-like is left broken."""
    from benchmarks.paper.experiments.common import Session

    item = next(i for i in bfcl_items("simple_python", data_dir) if i["id"] == "simple_python_4")
    req = request(item, "simple_python")
    tools, dialect = req.toolset(), Hermes()
    session = Session("smollm2", backend="llamacpp", progress=False)
    decoder = session.decoder("tooldec", tools, dialect)
    prompt = session.chat(req.messages, tools=tools, dialect=dialect)
    text = session.once(decoder, "tooldec", prompt, max_new_tokens=160, tool_choice="auto").text
    row = count_answer(req, dialect, tools, text)
    assert (row["calls_parsed"], row["broken"], row["invalid"]) == (1, 0, 0), text
    assert Hermes(openers=["tag", "fenced", "bare"]).scan(text).calls == [], text  # only the new opener made it a call
