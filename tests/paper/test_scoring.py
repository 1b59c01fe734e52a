"""The scorers of the paper experiments, on hand-made outputs, against the data README's rules."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.paper.datasets import data_dir as default_data_dir
from benchmarks.paper.experiments import bfcl, funcqa, restbench, tooleval
from benchmarks.paper.experiments.common import call_errors
from benchmarks.paper.experiments.repair import closest_name, first_failed_call, repair_call
from tooldec.dialects import Hermes, ReAct, ToolCall, ToolkenGPT


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2^8=<power>(2,8)=256. #### 256", 256.0),
        ("#### 12 apples, then 3", 3.0),  # the last number after the last ####
        ("The total is 1,234.5.", 1234.5),
        ("x=-3.5", -3.5),
        ("#### .5", 0.5),
        ("nothing here", None),
    ],
)
def test_funcqa_answer_is_the_last_number(text: str, expected: float | None) -> None:
    assert funcqa.extract_answer(text) == expected


@pytest.mark.parametrize(
    ("pred", "gold", "correct"),
    [(32.38, 32.38, True), (32.41, 32.38, True), (32.42, 32.38, False), (-100.1, -100.0, True),
     (-100.2, -100.0, False), (0.0, 0.0, True), (1e-9, 0.0, False), (None, 5.0, False)],
)
def test_funcqa_tolerance_is_a_tenth_of_a_percent(pred: float | None, gold: float, correct: bool) -> None:
    assert funcqa.is_correct(pred, gold) is correct


def test_funcqa_tools_compute_what_the_prompts_show() -> None:
    tools = funcqa.funcqa_toolset()
    assert tools["add"](numbers=[277, 209, 72]) == 558
    assert tools["divide"](a=1943, b=60) == 32.3833
    assert tools["choose"](a=8, b=7) == 8
    assert tools["log"](a=100) == 2
    with pytest.raises(ValueError):
        tools["gcd"](numbers=[2.5, 5])


def test_funcqa_few_shot_examples_are_read_from_the_templates(data_dir: Path, full_data: bool) -> None:
    header, examples = funcqa.few_shot(data_dir, "multi_hop")
    assert header.startswith("Answer the following questions with <add>")
    assert len(examples) == 4 and "<power>(2,8)=256" in examples[0][1]
    counts = (68, 60) if full_data else (8, 8)  # the fixtures hold the first 8 of each
    assert (len(funcqa.items(data_dir, "multi_hop")), len(funcqa.items(data_dir, "one_hop"))) == counts


FN = [{"name": "area", "parameters": {"type": "dict", "required": ["base"], "properties": {
    "base": {"type": "integer"}, "height": {"type": "float"}, "unit": {"type": "string"}}}}]


@pytest.mark.parametrize(
    ("arguments", "gold", "match"),
    [
        ({"base": 10, "unit": "Square-Meters"}, {"base": [10], "unit": ["square meters", ""]}, True),  # normalised
        ({"base": 10}, {"base": [10], "unit": ["units", ""]}, True),  # "" marks an optional parameter
        ({"base": 10}, {"base": [10], "unit": ["units"]}, False),  # no "": it must be given
        ({"base": 10, "height": 5}, {"base": [10], "height": [5.0]}, True),  # int accepted for float
        ({"base": 10.0}, {"base": [10]}, False),  # but no float for an int
        ({"base": 10, "depth": 1}, {"base": [10]}, False),  # a parameter outside the schema
        ({"unit": "cm"}, {"base": [10, ""], "unit": ["cm"]}, False),  # a required parameter missing
        ({"base": True}, {"base": [1]}, False),
    ],
)
def test_bfcl_ast_rules(arguments: dict[str, object], gold: dict[str, list[object]], match: bool) -> None:
    assert bfcl.call_matches(ToolCall("area", arguments), {"area": gold}, FN) is match


def test_bfcl_parallel_calls_match_in_any_order_and_irrelevance_wants_none() -> None:
    gold = [{"area": {"base": [1]}}, {"area": {"base": [2]}}]
    assert bfcl.ast_match([ToolCall("area", {"base": 2}), ToolCall("area", {"base": 1})], gold, FN)
    assert not bfcl.ast_match([ToolCall("area", {"base": 2})], gold, FN)
    assert not bfcl.ast_match([ToolCall("area", {"base": 2})] * 2, gold, FN)
    assert bfcl.ast_match([], None, FN) and not bfcl.ast_match([ToolCall("area", {"base": 1})], None, FN)


def test_bfcl_tooldec_tag_is_tooldec_with_the_tag_opener_only() -> None:
    from benchmarks.paper.experiments.common import constrained
    from benchmarks.paper.experiments.runner import systems_of

    assert "tooldec_tag" in systems_of("bfcl") and constrained("tooldec_tag")
    assert [o.name for o in bfcl.dialect("tooldec_tag").openers()] == ["tag"]
    assert [o.name for o in bfcl.dialect("tooldec").openers()] == [o.name for o in Hermes().openers()]
    fenced = '```json\n{"name": "area", "arguments": {"base": 1}}\n```'
    assert bfcl.dialect("tooldec_tag").parse_calls(fenced) == [] and Hermes().parse_calls(fenced)


def test_bfcl_tooldec_any_forces_every_opener_as_tooldec_did_before() -> None:
    from benchmarks.paper.experiments.common import constrained
    from benchmarks.paper.experiments.runner import systems_of

    assert "tooldec_any" in systems_of("bfcl") and constrained("tooldec_any")
    every = [o.name for o in Hermes().openers()]
    assert [o.name for o in bfcl.dialect("tooldec_any").forced_openers()] == every
    assert [o.name for o in bfcl.dialect("tooldec").forced_openers()] == ["tag"]


def test_restbench_correct_path_is_an_ordered_subsequence() -> None:
    gold = ["GET /search/movie", "GET /movie/{movie_id}/credits"]
    assert restbench.correct_path(["GET /search/movie", "GET /movie/{movie_id}", "GET /movie/{movie_id}/credits"], gold)
    assert not restbench.correct_path(["GET /movie/{movie_id}/credits", "GET /search/movie"], gold)
    assert not restbench.correct_path(["GET /search/movie"], gold)


def test_tool_errors_follow_the_three_kinds() -> None:
    tools = funcqa.funcqa_toolset()
    dialect = ToolkenGPT(tools)
    text = "<add>(1, 2)=3 <adding>(1, 2)=3 <subtract>(1)= <multiply>(2*3)=6"
    assert call_errors(text, dialect.parse_calls(text), tools, dialect) == ["unknown_tool", "unparseable", "unparseable"]
    react = ReAct()
    text = 'Action: Finish\nAction Input: {"x": 1}\nAction: Finish\nAction Input: oops\n'
    assert call_errors(text, react.parse_calls(text), tools, react) == ["unknown_tool", "unparseable"]


def test_repair_maps_names_and_rebinds_positional_arguments() -> None:
    tools = funcqa.funcqa_toolset()
    dialect = ToolkenGPT(tools)
    call = dialect.parse_calls("<subtraction>(5, 3)=")[0]
    assert dict(call.arguments) == {"0": 5, "1": 3}
    fixed = repair_call(call, tools, dialect)
    assert fixed.name == "subtract" and dict(fixed.arguments) == {"a": 5, "b": 3}
    assert closest_name("play", ["spotify.play", "spotify.pause"]) == "spotify.play"
    assert first_failed_call("<add>(1, 2)=3 then <power>(2^3)=8", dialect, tools) == len("<add>(1, 2)=3 then ")
    assert first_failed_call("ok: <add>(1, 2)=3", dialect, tools) is None
    hermes = Hermes()
    assert first_failed_call('<tool_call>\n{"name": "add", "arguments": {"numbers": [1]}}\n</tool_call>', hermes, tools) is None


def test_tooleval_relevant_apis_are_found_among_the_available_tools(data_dir: Path, full_data: bool) -> None:
    item = tooleval.items(data_dir, "i2_category")[0]
    names = [t["name"] for t in item["available_tools"]]
    found = tooleval.relevant_names(names, item["relevant"])
    assert found and found <= set(names)
    assert len(tooleval.items(data_dir, "i3_instruction")) == (100 if full_data else 5)


def test_bfcl_schemas_all_register(data_dir: Path) -> None:
    from tooldec.tools import Tool, ToolSet

    for subset in bfcl.SUBSETS:
        for item in bfcl.items(data_dir, subset):
            ToolSet([Tool.from_dict({"name": f["name"], "parameters": bfcl.bfcl_schema(f["parameters"])})
                     for f in item["function"]])


def test_data_dir_is_a_path() -> None:
    assert isinstance(default_data_dir(), Path)


def test_generalization_tooldec_beam_any_is_the_beam_with_every_opener_as_before() -> None:
    from benchmarks.paper.experiments import generalization
    from benchmarks.paper.experiments.common import beamed, constrained, hermes_dialect
    from benchmarks.paper.experiments.runner import systems_of

    assert "tooldec_beam_any" in systems_of("generalization") and constrained("tooldec_beam_any")
    assert beamed("tooldec_beam_any") and beamed("tooldec_beam") and not beamed("tooldec_any")
    every = [o.name for o in Hermes().openers()]
    assert [o.name for o in hermes_dialect("tooldec_beam_any").forced_openers()] == every
    assert [o.name for o in hermes_dialect("tooldec_beam").forced_openers()] == ["tag"]
    with pytest.raises(ValueError, match="KAMEL"):  # refused before the model is touched
        generalization.score(None, "tooldec_beam_any", "funcqa_seen", {}, Path("."))  # type: ignore[arg-type]
