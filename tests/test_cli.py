"""The ``tooldec`` command: loading the user's tools, ``demo`` and ``run`` on the real SmolLM2."""

from __future__ import annotations

import io
import re
import textwrap
from pathlib import Path

import pytest

from tooldec.cli import Palette, load_tools, main, render_result
from tooldec.dialects import Hermes, ToolCall
from tooldec.models import smollm2_gguf_path
from backends.smollm2 import use_torch_threads
from tooldec.runtime import CallRecord, Event, EventKind, InvalidCall, InvalidKind, Result, Trace

@pytest.fixture(autouse=True, scope="module")
def one_torch_thread() -> None:
    use_torch_threads()


ANSI = re.compile(r"\033\[[0-9;]*m")

TOOLS_FILE = '''
from math import sqrt  # imported: not a tool

def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b

def _helper(x: int) -> int:
    return x
'''


def write(tmp_path: Path, source: str, name: str = "tools.py") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(source))
    return path


def test_public_functions_defined_in_the_file_are_the_tools(tmp_path: Path) -> None:
    assert [getattr(fn, "__name__", None) for fn in load_tools(write(tmp_path, TOOLS_FILE))] == ["add"]


def test_a_tools_list_wins(tmp_path: Path) -> None:
    source = TOOLS_FILE + '\nTOOLS = [{"name": "lookup", "parameters": {"type": "object", "properties": {}}}]\n'
    tools: list[object] = list(load_tools(write(tmp_path, source)))
    assert tools == [{"name": "lookup", "parameters": {"type": "object", "properties": {}}}]


def test_a_file_without_tools_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="defines no tools"):
        load_tools(write(tmp_path, "X = 1\n"))
    with pytest.raises(FileNotFoundError):
        load_tools(tmp_path / "missing.py")


def test_run_reports_a_bad_tools_file_before_loading_the_model(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = write(tmp_path, "def f(x):\n    return x\n")  # no type hint: the tool cannot be registered
    assert main(["run", "--model", str(tmp_path / "no-model.gguf"), "--tools", str(bad), "hi"]) == 2
    assert "parameter 'x' has no type hint" in capsys.readouterr().err


def test_calls_results_and_invalid_calls_are_highlighted() -> None:
    good = ToolCall("add", {"a": 1, "b": 2})
    bad = ToolCall("mul", {"a": 1})
    text = Hermes().format_call(good) + "\n" + Hermes().format_call(bad)
    trace = Trace(events=[Event(EventKind.TEXT, text), Event(EventKind.RESULT, "<tool_response>\n3\n</tool_response>", good)],
                  invalid=[InvalidCall(InvalidKind.UNKNOWN_TOOL, "unknown tool 'mul'", bad)])
    result = Result(text, "", [CallRecord(good, "3", None, 0.0), CallRecord(bad, None, "unknown tool 'mul'", 0.0)], trace)
    coloured = render_result(result, Hermes(), Palette(True))
    assert f"\033[1;36m{Hermes().format_call(good)}\033[0m" in coloured
    assert f"\033[1;31m{Hermes().format_call(bad)}\033[0m" in coloured
    assert "\033[32m<tool_response>" in coloured
    assert ANSI.sub("", coloured) == render_result(result, Hermes(), Palette(False))


def test_demo_compares_tooldec_with_unconstrained_generation() -> None:
    out = io.StringIO()
    assert main(["demo", "--question", "What is the capital of Kenya?", "--max-new-tokens", "64", "--no-color"], out=out) == 0
    text = out.getvalue()
    print(text)
    assert "-- tooldec --" in text and "-- unconstrained --" in text and "<tool_call>" in text
    table = re.search(r"invalid calls\s+(\d+)\s+(\d+)", text)
    assert table is not None and table.group(1) == "0"
    assert "\033[" not in text


def test_run_uses_the_tools_of_a_file(tmp_path: Path) -> None:
    out = io.StringIO()
    status = main(["run", "--model", str(smollm2_gguf_path()), "--tools", str(write(tmp_path, TOOLS_FILE)),
                   "--tool-choice", "add", "--no-parallel", "--max-new-tokens", "48", "--no-color", "What is 2 plus 3?"],
                  out=out)
    text = out.getvalue()
    print(text)
    assert status == 0
    call = re.search(r"call: add\((\{.*\})\) -> (\S+)", text)
    assert call is not None, text
