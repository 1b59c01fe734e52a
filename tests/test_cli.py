"""The ``tooldec`` command: loading the user's tools, ``demo`` and ``run`` on the real SmolLM2.

Every mistake a user can make on the command line is reported as one line on stderr (exit 2),
before the model loads: the tests that check this give a model file that would fail to load, so
an option checked after loading would show the model's error instead.
"""

from __future__ import annotations

import io
import json
import re
import sys
import textwrap
from pathlib import Path

import pytest
from backends.smollm2 import use_torch_threads

from tooldec.cli import Palette, UsageError, load_tools, main, mcp_environment, render_result
from tooldec.dialects import Hermes, ToolCall
from tooldec.errors import ToolSourceError
from tooldec.models import smollm2_gguf_path
from tooldec.runtime import CallRecord, Event, EventKind, InvalidCall, InvalidKind, Result, Trace

MCP_SERVER = Path(__file__).resolve().parent / "sources" / "mcp_server.py"

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
    assert [tool.name for tool in load_tools(write(tmp_path, TOOLS_FILE))] == ["add"]


def test_a_tools_list_wins(tmp_path: Path) -> None:
    source = TOOLS_FILE + '\nTOOLS = [{"name": "lookup", "parameters": {"type": "object", "properties": {}}}]\n'
    assert [tool.name for tool in load_tools(write(tmp_path, source))] == ["lookup"]


def test_a_file_without_tools_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ToolSourceError, match="defines no tools"):
        load_tools(write(tmp_path, "X = 1\n"))
    with pytest.raises(FileNotFoundError, match="no such file"):
        load_tools(tmp_path / "missing.py")


DEFINITIONS = [
    {"type": "function", "function": {"name": "lookup", "description": "Look up a word.",
                                      "parameters": {"type": "object", "properties": {"word": {"type": "string"}}}}},
    {"name": "list_files", "description": "MCP shape.", "inputSchema": {"type": "object", "properties": {}}},
    {"name": "search", "description": "Anthropic shape.",
     "input_schema": {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}},
]
OPENAPI_YAML = """
openapi: 3.0.0
servers: [{url: "https://api.example.com/v1"}]
paths:
  /pets/{pet_id}:
    get:
      operationId: get_pet
      parameters: [{name: pet_id, in: path, required: true, schema: {type: integer}}]
"""


@pytest.mark.parametrize(("name", "text", "names"), [
    ("defs.json", json.dumps(DEFINITIONS), ["lookup", "list_files", "search"]),
    ("mcp.json", json.dumps({"tools": DEFINITIONS[1:2]}), ["list_files"]),  # as an MCP server lists them
    ("one.yaml", "name: lookup\ninputSchema: {type: object, properties: {}}\n", ["lookup"]),
    ("api.yaml", OPENAPI_YAML, ["get_pet"]),
    ("api.json", json.dumps({"openapi": "3.1.0", "servers": [{"url": "http://127.0.0.1:9"}], "paths": {
        "/ping": {"get": {"operationId": "ping"}}}}), ["ping"]),
])
def test_tools_files_in_json_and_yaml(tmp_path: Path, name: str, text: str, names: list[str]) -> None:
    assert [tool.name for tool in load_tools(write(tmp_path, text, name))] == names


FAKE_GGUF = b"GGUF" + bytes(100)  # starts like a GGUF file, cannot load: an error only if loading is tried


@pytest.mark.parametrize(("files", "options", "error"), [
    ({"tools.py": "def f(x):\n    return x\n"}, [],
     "{tmp}/tools.py:1: tool 'f': parameter 'x' has no type hint; annotate it (e.g. 'x: str')"),
    ({"tools.py": "def f(x: int) -> int:\n    return x +\n"}, [], "{tmp}/tools.py:2: syntax error: invalid syntax"),
    ({"tools.py": "import math\n\nTOOLS = 5\n"}, [],
     "{tmp}/tools.py:3: TOOLS must be a list of tools (functions, tool dicts, Pydantic models), got int"),
    ({"tools.py": "import json\njson.loads('{')\n"}, [],
     "{tmp}/tools.py:2: JSONDecodeError: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"),
    ({"tools.json": '[{"name": "f",\n "parameters": }]'}, [], "{tmp}/tools.json:2:16: not valid JSON: Expecting value"),
    ({"tools.yaml": "openapi: 3.0.0\npaths: [/x]\n"}, [],
     "{tmp}/tools.yaml: the document's 'paths' must be an object of path -> path item, got list"),
    ({"tools.py": TOOLS_FILE}, ["--tool-choice", "ad"],
     "--tool-choice 'ad' is neither auto, required, none nor a tool (did you mean 'add'?); the tools are add"),
    ({"tools.py": TOOLS_FILE}, ["--model", "smolm2"], "no such file: smolm2 (did you mean 'smollm2'?)"),
    ({"tools.py": TOOLS_FILE}, ["--model", "{tmp}/missing.gguf"],
     "no such file: {tmp}/missing.gguf (give smollm2, qwen, a .gguf file or a model folder)"),
    ({"tools.py": TOOLS_FILE}, ["--model", "{tmp}/tools.py"], "{tmp}/tools.py: not a model (give a .gguf file or a "
                                                               "model folder)"),
    ({"tools.py": TOOLS_FILE}, ["--model", "{tmp}/tools.gguf"], "{tmp}/tools.gguf: not a GGUF file (it does not start "
                                                                "with 'GGUF')"),
    ({}, [], "no tools: give --tools FILE (Python, JSON or YAML tool definitions, an OpenAPI document) and/or "
             "--mcp SERVER (a command or a URL)"),
])
def test_mistakes_are_one_line_before_the_model_loads(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                      files: dict[str, str], options: list[str], error: str) -> None:
    (tmp_path / "model.gguf").write_bytes(FAKE_GGUF)
    (tmp_path / "tools.gguf").write_text("not a model")
    for name, text in files.items():
        write(tmp_path, text, name)
    tools = ["--tools", str(tmp_path / next(iter(files)))] if files else []
    options = [o.replace("{tmp}", str(tmp_path)) for o in options]
    assert main(["run", "--model", str(tmp_path / "model.gguf"), *tools, *options, "hi"]) == 2
    err = capsys.readouterr().err
    assert err == f"tooldec run: error: {error.replace('{tmp}', str(tmp_path))}\n"


@pytest.mark.parametrize(("option", "error"), [
    (["--dialect", "hermse"], "argument --dialect: unknown dialect 'hermse' (did you mean 'hermes'?); choose from "
                              "auto, deepseek_v31, glm45, gpt_oss, hermes, kimi_k2, llama3_json, minimax_m2, mistral, "
                              "mistral_tekken, pythonic, qwen3, qwen3_coder, react, toolkengpt"),
    (["--backend", "llama"], "argument --backend: unknown backend 'llama' (did you mean 'llamacpp'?); choose from "
                             "auto, llamacpp, transformers"),
    (["--context", "0"], "argument --context: expected a number >= 1, got 0"),
])
def test_choices_are_checked_by_the_parser(capsys: pytest.CaptureFixture[str], option: list[str], error: str) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["run", "--tools", "tools.py", *option, "hi"])
    assert exit_info.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == f"tooldec run: error: {error}"


@pytest.mark.parametrize("size", [1000, 5_000_000])
def test_a_truncated_gguf_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str], size: int) -> None:
    truncated = tmp_path / "cut.gguf"
    with smollm2_gguf_path().open("rb") as whole:
        truncated.write_bytes(whole.read(size))
    assert main(["run", "--model", str(truncated), "--tools", str(write(tmp_path, TOOLS_FILE)), "hi"]) == 2
    last = capsys.readouterr().err.splitlines()[-1]
    assert last.startswith(f"tooldec run: error: {truncated}: cannot load the model (is the file complete? "), last


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
    assert main(["demo", "--question", "What is the capital of Kenya?", "--max-new-tokens", "64", "--no-color",
                 "--threads", "1"], out=out) == 0
    text = out.getvalue()
    print(text)
    assert "by SmolLM2-135M-Instruct (llamacpp)" in text, "llama.cpp is installed: the demo uses it"
    assert "-- tooldec --" in text and "-- unconstrained --" in text and "<tool_call>" in text
    table = re.search(r"invalid calls\s+(\d+)\s+(\d+)", text)
    assert table is not None and table.group(1) == "0"
    assert "\033[" not in text


def test_run_uses_the_tools_of_a_file(tmp_path: Path) -> None:
    out = io.StringIO()
    status = main(["run", "--model", "smollm2", "--tools", str(write(tmp_path, TOOLS_FILE)), "--threads", "1",
                   "--tool-choice", "add", "--no-parallel", "--max-new-tokens", "48", "--no-color", "What is 2 plus 3?"],
                  out=out)
    text = out.getvalue()
    print(text)
    assert status == 0
    call = re.search(r"call: add\((\{.*\})\) -> (\S+)", text)
    assert call is not None, text
    arguments = json.loads(call.group(1))
    assert call.group(2) == str(arguments["a"] + arguments["b"])


def test_run_with_set_and_enum_parameters(tmp_path: Path) -> None:
    """``set[int]`` needs no ``uniqueItems`` (which decoding cannot enforce): the model writes a
    list, the function gets a set; an Enum parameter gets the member."""
    tools = write(tmp_path, """
        import enum

        class Order(enum.Enum):
            UP = "up"
            DOWN = "down"

        def arrange(numbers: set[int], order: Order) -> str:
            \"\"\"Sort distinct numbers up or down.\"\"\"
            assert isinstance(numbers, set) and isinstance(order, Order)
            return " ".join(map(str, sorted(numbers, reverse=order is Order.DOWN)))
        """)
    out = io.StringIO()
    status = main(["run", "--tools", str(tools), "--threads", "1", "--tool-choice", "arrange", "--no-parallel",
                   "--max-new-tokens", "40", "--no-color", "Sort 3, 1, 3, 2 from the largest."], out=out)
    text = out.getvalue()
    call = re.search(r"call: arrange\((\{.*\})\) -> (.*)", text)
    assert status == 0 and call is not None, text
    arguments = json.loads(call.group(1))
    expected = sorted(set(arguments["numbers"]), reverse=arguments["order"] == "down")
    assert call.group(2) == " ".join(map(str, expected)), text


def test_a_prompt_too_long_says_how_to_raise_the_context(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--tools", str(write(tmp_path, TOOLS_FILE)), "--threads", "1", "--context", "64",
                 "What is 2 plus 3?"]) == 2
    err = capsys.readouterr().err.splitlines()[-1]
    assert re.fullmatch(r"tooldec run: error: the prompt has \d+ tokens but the model's context holds 64: load the "
                        r"model with a larger context \(tooldec run --context N; .*", err), err


def test_run_passes_the_shell_environment_to_mcp_servers(monkeypatch: pytest.MonkeyPatch) -> None:
    """A variable set in the caller's shell (an API key) reaches the MCP server ``tooldec run``
    starts, and ``--mcp-env NAME=VALUE`` sets one more."""
    monkeypatch.setenv("TOOLDEC_TEST_VARIABLE", "from-the-shell")
    out = io.StringIO()
    status = main(["run", "--mcp", f"{sys.executable} {MCP_SERVER}", "--mcp-env", "TOOLDEC_TEST_OTHER=set-here",
                   "--threads", "1", "--tool-choice", "show_variable", "--no-parallel", "--max-new-tokens", "40",
                   "--no-color", "Show the variables."], out=out)
    text = out.getvalue()
    assert status == 0 and re.search(r"call: show_variable\(.*\) -> from-the-shell set-here\n", text), text


def test_mcp_env_settings(capsys: pytest.CaptureFixture[str]) -> None:
    caller = {"PATH": "/bin", "KEY": "k"}
    assert mcp_environment(["A=1", "KEY", "B=x=y", "EMPTY="], caller) == {
        "PATH": "/bin", "KEY": "k", "A": "1", "B": "x=y", "EMPTY": ""}
    with pytest.raises(UsageError, match="MISSING is not set in this environment"):
        mcp_environment(["MISSING"], caller)
    with pytest.raises(UsageError, match="write it as NAME=VALUE"):
        mcp_environment(["=1"], caller)
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    usage = " ".join(capsys.readouterr().out.split())  # argparse wraps the lines
    assert "--mcp-env NAME[=VALUE]" in usage and "gets this shell's whole environment" in usage


def test_run_with_an_mcp_server(capsys: pytest.CaptureFixture[str]) -> None:
    out = io.StringIO()
    status = main(["run", "--mcp", f"{sys.executable} {MCP_SERVER}", "--threads", "1", "--tool-choice", "add",
                   "--no-parallel", "--max-new-tokens", "40", "--no-color", "What is 2 plus 3?"], out=out)
    text = out.getvalue()
    call = re.search(r"call: add\((\{.*\})\) -> (\S+)", text)
    assert status == 0 and call is not None, text
    arguments = json.loads(call.group(1))
    assert call.group(2) == str(arguments["a"] + arguments["b"]), "the server computed it"
    assert "note: MCP tool 'expand' left out: tool 'expand': at /properties/template/format: keyword 'format'" \
        in capsys.readouterr().err
