"""What a request tells a server: the dialect's openers (which start a call in auto mode), chosen
per request (vLLM's ``vllm_xargs``) or per server (``tooldec serve --openers``) and checked before
anything is loaded; and the key its tools are cached by."""

from __future__ import annotations

import pytest

from tooldec.dialects import Hermes, Pythonic
from tooldec.serving.cli import main
from tooldec.serving.engine import tools_key
from tooldec.serving.vllm.args import KEY, ToolDecArgs, extra_args, text_key

TOOL = {"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {}}}}


def test_openers_travel_with_the_request_and_make_the_dialect() -> None:
    args = ToolDecArgs.parse(extra_args([TOOL], dialect="pythonic", openers=["start", "call"])[KEY])
    assert args.openers == ("start", "call")
    dialect = args.make_dialect()
    assert isinstance(dialect, Pythonic) and dialect.named_openers
    assert args.dialect_key != ToolDecArgs.parse(extra_args([TOOL], dialect="pythonic")[KEY]).dialect_key
    only_tag = ToolDecArgs.parse({"tools": [TOOL], "openers": "tag"}).make_dialect()
    assert isinstance(only_tag, Hermes) and [o.name for o in only_tag.openers()] == ["tag"]


@pytest.mark.parametrize("openers", [["nope"], [], "", 3])
def test_an_unknown_opener_is_refused_with_the_declared_ones(openers: object) -> None:
    with pytest.raises(ValueError, match="openers"):
        ToolDecArgs.parse({"tools": [TOOL], "dialect": "hermes", "openers": openers})


def test_forced_openers_travel_with_the_request_and_are_checked() -> None:
    args = ToolDecArgs.parse({"tools": [TOOL], "tool_choice": "required", "forced": ["tag", "fenced"]})
    assert [o.name for o in args.make_dialect().forced_openers()] == ["tag", "fenced"]
    assert ToolDecArgs.parse(args.to_json()).dialect_key == args.dialect_key != ToolDecArgs.parse({"tools": [TOOL]}).dialect_key
    with pytest.raises(ValueError, match="'forced'.*not in use"):
        ToolDecArgs.parse({"tools": [TOOL], "openers": ["tag", "bare"], "forced": ["fenced"]})


def test_serve_refuses_an_unknown_opener_before_loading_the_model(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--dialect", "pythonic", "--openers", "start,nope", "--model", "/nonexistent.gguf"]) == 2
    err = capsys.readouterr().err
    assert "unknown opener(s) ['nope']" in err and "declared: ['start', 'call', 'inline_call']" in err


def test_serve_refuses_a_forced_opener_not_in_use(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--dialect", "hermes", "--openers", "tag,bare", "--forced-openers", "fenced",
                 "--model", "/nonexistent.gguf"]) == 2
    assert "forced opener(s) ['fenced'] not in use; in use: ['tag', 'bare']" in capsys.readouterr().err


def test_arguments_sent_as_text_are_keyed_by_the_text() -> None:
    """A server hashes the text a client sends with every request instead of writing the tools out
    again; decoded arguments (offline) keep the canonical key, the same for any key order."""
    text = extra_args([TOOL], "required")[KEY]
    assert ToolDecArgs.parse(text).key == text_key(text) == text_key(text.encode())
    assert ToolDecArgs.parse(text.replace('"required"', '"auto"')).key != text_key(text)
    reordered = {"function": dict(reversed(list(TOOL["function"].items()))), "type": "function"}
    assert ToolDecArgs.parse({"tools": [reordered]}).key == tools_key([TOOL]) == ToolDecArgs.parse({"tools": [TOOL]}).key
