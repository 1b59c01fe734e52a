"""Experiment II (``figure5``) and the renamed RestBench (``naming``) end to end on SmolLM2 (llama.cpp).

Learned rows are trained here with tiny caps (one or two texts per seen tool), saved where the
experiment looks for them, and loaded by the run; what is checked is the claim, not a score:
every ToolDec row has 0 tool errors, and the files, tables and plot are written.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.paper.datasets import data_dir
from benchmarks.paper.experiments.common import Session
from benchmarks.paper.experiments.figure5 import extra_tables, paired_names
from benchmarks.paper.experiments.learn import Protocol, learned_tokens, split
from benchmarks.paper.experiments.runner import report, run
from tooldec.learned import LearnedTokens
from tooldec.runtime.naming import rewrite_names
from tooldec.tools.openapi import openapi_operations

DATA = data_dir()
pytestmark = [pytest.mark.skipif(not DATA.is_dir(), reason="benchmark data not found (set TOOLDEC_DATA)"),
              pytest.mark.filterwarnings("ignore::DeprecationWarning")]
pytest.importorskip("llama_cpp", reason="the llama extra is not installed")

TINY = {"kamel": Protocol(1, 0, 0, 48), "funcqa": Protocol(2, 1, 1, 64)}


@pytest.fixture(scope="module")
def session() -> Session:
    return Session("smollm2", backend="llamacpp", progress=False)


@pytest.fixture(scope="module")
def out(session: Session, tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("bench")
    for task in ("kamel", "funcqa"):
        for kind in ("trigger", "toolkens"):
            learned_tokens(session, task, kind, DATA, folder / "figure5" / "smollm2" / "learned",  # type: ignore[arg-type]
                           protocol=TINY[task], progress=False)
    return folder


def test_the_seen_split_keeps_unseen_tools_out_of_training() -> None:
    parts = split("funcqa", DATA, Protocol(3, 2, 1, 64))
    assert {d.marks[0].tool for d in parts["train"]} == {"add", "subtract", "multiply", "divide"}
    assert len(parts["train"]) == 12 and len(parts["seen"]) == 8 and len(parts["unseen"]) == 9
    assert not {d.marks[0].tool for d in parts["unseen"]} & {"add", "subtract", "multiply", "divide"}


def test_saved_rows_are_loaded_not_retrained(session: Session, out: Path) -> None:
    folder = out / "figure5" / "smollm2" / "learned"
    saved = LearnedTokens.load(folder / "kamel_toolkens.npz")
    assert saved.names[0] == "<broadcasted_places>" and saved.size == 30
    again = learned_tokens(session, "kamel", "toolkens", DATA, folder)  # default caps: would take long to train
    assert again.names == saved.names and (again.rows == saved.rows).all()
    assert json.loads((folder / "funcqa_trigger.json").read_text())["seen_tools"] == ["add", "subtract", "multiply",
                                                                                        "divide"]


@pytest.mark.parametrize("system", ["tooldec", "tooldec_beam", "toolkengpt", "zeroshot", "fewshot"])
def test_figure5_rows(session: Session, out: Path, system: str) -> None:
    subsets = ("kamel_30" if system.endswith("shot") else "kamel_60", "funcqa_oh_unseen")  # docs in context: shorter
    summary = run("figure5", session, system, data=DATA, out=out, limit=1, subsets=subsets)
    for subset in subsets:
        (row,) = [json.loads(line) for line in (out / "figure5" / "smollm2" / system / f"{subset}.jsonl").open()]
        if system.startswith("tooldec"):
            assert row["invalid_kinds"] == [], row["text"]
        assert 0 <= summary["subsets"][subset]["ci_low"] <= summary["subsets"][subset]["ci_high"] <= 1
    table = report("figure5", out / "figure5" / "smollm2")
    assert "Mode switching" in table and (out / "figure5" / "smollm2" / "figure5.png").read_bytes()[:4] == b"\x89PNG"


def test_kamel_few_shot_is_given_as_chat_turns(session: Session) -> None:
    """The 30 examples are prior turns of the chat template (a user question, the assistant's
    call), and the prompt ends where the assistant's next turn begins."""
    from benchmarks.paper.experiments.figure5 import _kamel_shots, kamel_chat_prompt
    from benchmarks.paper.experiments.generalization import _kamel
    from tooldec.dialects import Hermes

    tools, names, docs = _kamel(DATA, 60)
    shots = _kamel_shots(DATA, names, {t.name: list(t.parameters["properties"]) for t in tools})
    prompt = kamel_chat_prompt(session, "Where was 964 Subamara discovered?", docs, shots)
    assert len(shots) == 30 and all(Hermes().parse_calls(call) for _, call in shots)
    assert prompt.count("<|im_start|>assistant") == 31 and prompt.endswith("<|im_start|>assistant\n")
    assert shots[0][1] in prompt and docs in prompt


def test_greedy_and_beam_are_paired_by_question(tmp_path: Path) -> None:
    rows = {"tooldec": [(True, "a"), (False, "b"), (False, "b")], "tooldec_beam": [(True, "a"), (True, "c")]}
    for system, answers in rows.items():
        (tmp_path / system).mkdir()
        lines = [json.dumps({"question": f"q{i}", "correct": ok, "chosen": name, "invalid_calls": 0, "seconds": 1.0,
                             **({"beam": [{"evaluations": 4, "seconds": 0.5}]} if system == "tooldec_beam" else {})})
                 for i, (ok, name) in enumerate(answers)]
        (tmp_path / system / "kamel_60.jsonl").write_text("\n".join(lines) + "\n")
    row = paired_names(tmp_path, "kamel_60")
    assert row is not None and row["n"] == 2 and (row["greedy"], row["beam"]) == (0.5, 1.0)
    assert (row["only_greedy"], row["only_beam"], row["other_name"], row["p"]) == (0, 1, 1, 1.0)
    assert row["name_evaluations"] == 4 and paired_names(tmp_path, "kamel_30") is None
    assert "Name choice" in extra_tables(tmp_path)


def test_naming_rows_and_the_names_cache(session: Session, out: Path) -> None:
    summary = run("naming", session, "tooldec", data=DATA, out=out, limit=1, subsets=("method_path",))
    assert summary["subsets"]["method_path"]["invalid_calls"] == 0
    from tooldec.backends import generator_for

    spec = json.loads((DATA / "restbench" / "tmdb_oas.json").read_text())
    operations = openapi_operations(spec, naming="method_path")[:3]
    cache = out / "names.json"
    generator = generator_for(session.model, session.tokenizer, session.vocab)
    first = rewrite_names(operations, generator, cache=cache)
    assert set(first) == {f"{op.method} {op.path}" for op in operations}
    assert all(name and name.replace("_", "").isalnum() for name in first.values())
    stored = json.loads(cache.read_text())
    stored["names"] = {route: f"cached_{i}" for i, route in enumerate(stored["names"])}
    cache.write_text(json.dumps(stored))
    assert list(rewrite_names(operations, generator, cache=cache).values()) == ["cached_0", "cached_1", "cached_2"]
    renamed = openapi_operations(spec, naming="method_path", names={"GET /movie/{movie_id}/credits": "movie cast!"})
    assert "movie_cast_" in [op.tool.name for op in renamed]
