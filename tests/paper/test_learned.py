"""Learned ``<T>`` and toolkens on the real SmolLM2 GGUF: features, training, the file, decoding.

Tiny caps (a handful of FuncQA demonstrations) keep it fast; the model and tokenizer are real.
Where a test needs the learned token to fire, its row is built from the model's own hidden state
so that it must (``_forcing_row``); what is checked is then the decoding path after it.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from benchmarks.paper.datasets import data_dir, funcqa_demonstrations
from benchmarks.paper.experiments.funcqa import funcqa_toolset
from benchmarks.paper.experiments.trigger_dialects import TriggerToolken
from tooldec.decoding import Grammar
from tooldec.dialects import ToolkenGPT
from tooldec.errors import BudgetError
from tooldec.learned import (
    Demonstration,
    LearnedTokenError,
    LearnedTokens,
    Mark,
    extract,
    fit_rows,
    switch_scores,
)
from tooldec.learned.features import IGNORE, TEXT, tokenize_demo
from tooldec.learned.generator import (
    LearnedGenerator,
    extended_vocabulary,
    learned_decoder,
)
from tooldec.models import smollm2_gguf_path

pytest.importorskip("llama_cpp", reason="the llama extra is not installed")

PROMPT = "Q: A shop sold 147 apples and 354 pears. How many fruits did it sell?\nA: It sold 147+354="


@functools.cache
def llama() -> tuple[Any, Any, Any]:
    from tooldec.backends import load

    model, tokenizer, vocab, _ = load(smollm2_gguf_path(), "llamacpp", threads=1)
    return model, tokenizer, vocab


def _encode(text: str) -> list[int]:
    return list(llama()[1].encode(text, add_special_tokens=False))


def _hidden(prompt: str) -> tuple[np.ndarray, float]:
    """The final hidden state after ``prompt`` and the largest vocabulary logit there."""
    demo = Demonstration(prompt + " x", (Mark(len(prompt), len(prompt) + 2, "add"),))
    features = extract(llama()[0], llama()[1], [demo], {"add": 0}, progress=False)
    at = int(np.flatnonzero(features.label >= 0)[0])
    return features.h[at], float(features.zmax[at])


def _forcing_row(prompt: str, margin: float = 5.0) -> np.ndarray:
    """A row whose logit after ``prompt`` beats every vocabulary logit by ``margin``."""
    h, zmax = _hidden(prompt)
    return (h * (zmax + margin) / float(h @ h)).astype(np.float32)


def test_a_demonstration_is_labelled_at_its_call_and_not_inside_its_result() -> None:
    text = "Q: 5572 mod 3241?\nA: It is 5572 mod 3241=2331."
    at = text.index("2331")
    ids, labels = tokenize_demo(_encode, Demonstration(text, (Mark(at, at + 4, "remainder"),)), {"remainder": 0}, 128)
    prefix = _encode(text[:at])
    assert ids[: len(prefix)] == prefix  # cut at the call: the boundary a prompt ending there has
    assert labels[len(prefix) - 1] == 0  # the position before the result predicts the call
    result = _encode("2331")
    assert all(label == IGNORE for label in labels[len(prefix): len(prefix) + len(result) - 1])
    assert labels[: len(prefix) - 1] == [TEXT] * (len(prefix) - 1)
    assert len(labels) == len(ids) - 1


def test_the_funcqa_demonstrations_mark_the_result_of_each_call() -> None:
    if not data_dir().is_dir():
        pytest.skip("benchmark data not found")
    demos = funcqa_demonstrations()
    assert len(demos) == 647  # 650 less the three texts without a call
    first = demos[0]
    assert first.text[first.marks[0].at:first.marks[0].end] == "2331" and first.marks[0].tool == "remainder"


def test_the_file_round_trips_and_refuses_another_model(tmp_path: Path) -> None:
    model, _, vocab = llama()
    rows = np.arange(2 * model.n_embd(), dtype=np.float32).reshape(2, -1) / 1000
    learned = LearnedTokens(("<a>", "<b>"), ("<a>(", "<b>("), rows, "smollm2", int(model.n_embd()), vocab.fingerprint,
                            {"note": "test"})
    path = learned.save(tmp_path / "rows.npz")
    assert path.stat().st_size < 8000  # float16: a few KB
    back = LearnedTokens.load(path)
    assert back.names == learned.names and back.expansions == learned.expansions and back.meta == {"note": "test"}
    np.testing.assert_allclose(back.rows, rows, rtol=1e-3, atol=1e-3)
    back.check(int(model.n_embd()), vocab.fingerprint)
    with pytest.raises(LearnedTokenError, match="hidden size"):
        back.check(896, vocab.fingerprint)
    with pytest.raises(LearnedTokenError, match="vocabulary differs"):
        back.check(int(model.n_embd()), "another")
    with pytest.raises(LearnedTokenError, match="no learned-token file"):
        LearnedTokens.load(tmp_path / "missing.npz")
    with pytest.raises(LearnedTokenError, match="shape"):
        LearnedTokens(("<T>",), ("",), rows, "m", int(model.n_embd()), "f")


def test_training_teaches_the_trigger_to_fire_at_calls_and_not_in_text() -> None:
    if not data_dir().is_dir():
        pytest.skip("benchmark data not found")
    demos = [d for d in funcqa_demonstrations() if d.group in ("add", "multiply")][:8]
    features = extract(llama()[0], llama()[1], demos, {"add": 0, "multiply": 0}, max_tokens=96, progress=False)
    assert features.calls == 8
    before = switch_scores(features, np.zeros((1, features.h.shape[1]), dtype=np.float32))
    weight, record = fit_rows(features, 1)
    after = switch_scores(features, weight)
    assert before.fired == 0 and before.recall == 0
    assert record["loss_after"] < record["loss_before"]
    assert after.recall >= 0.75 and after.precision >= 0.75


def test_features_from_llama_cpp_and_transformers_agree() -> None:
    from tests.backends.smollm2 import smollm2

    demo = Demonstration(PROMPT + "501.", (Mark(len(PROMPT), len(PROMPT) + 3, "add"),))
    ours = extract(llama()[0], llama()[1], [demo], {"add": 0}, progress=False)
    model, tokenizer, _ = smollm2()
    theirs = extract(model, tokenizer, [demo], {"add": 0}, progress=False)
    cosine = (ours.h * theirs.h).sum(1) / np.linalg.norm(ours.h, axis=1) / np.linalg.norm(theirs.h, axis=1)
    assert cosine.min() > 0.98  # Q4_1 as quantised vs dequantised to float32
    assert np.array_equal(ours.label, theirs.label)


def test_the_trigger_opens_a_call_the_grammar_finishes() -> None:
    model, tokenizer, vocab = llama()
    learned = LearnedTokens.trigger(_forcing_row(PROMPT), model="smollm2", vocab_fingerprint=vocab.fingerprint)
    generator = LearnedGenerator(model, tokenizer, vocab, learned)
    tools = funcqa_toolset()
    dialect = TriggerToolken(tools)
    grammar = Grammar(tools, generator.vocab, dialect)
    generation = generator.generate(_encode(PROMPT), max_new_tokens=40, grammar=grammar, stop_after_call=dialect)
    text = generator.vocab.decode(generation.ids).decode()
    assert [e.position for e in generator.events] == [0] and generator.events[0].name == "<T>"
    assert generation.call_closed and text.startswith("<") and text.endswith(")=")
    (call,) = dialect.parse_calls(text)
    assert call.name in tools and tools[call.name].validate_arguments(call.arguments) == []
    assert all(t < generator.width for t in generation.ids)  # the model never reads <T> itself


def test_a_required_call_that_cannot_fit_is_refused_before_decoding() -> None:
    """As every other loop: a budget below the call's need is refused with the need up front,
    not met by an empty mask at the first step."""
    model, tokenizer, vocab = llama()
    learned = LearnedTokens.trigger(_forcing_row(PROMPT), model="smollm2", vocab_fingerprint=vocab.fingerprint)
    generator = LearnedGenerator(model, tokenizer, vocab, learned)
    tools = funcqa_toolset()
    grammar = Grammar(tools, generator.vocab, TriggerToolken(tools))
    with pytest.raises(BudgetError, match="needs .* tokens but the budget is 2"):
        generator.generate(_encode(PROMPT), max_new_tokens=2, grammar=grammar, tool_choice="required")
    assert not generator.events


def test_a_toolken_writes_its_expansion_and_the_model_the_arguments() -> None:
    model, tokenizer, vocab = llama()
    row = _forcing_row(PROMPT)
    learned = LearnedTokens(("<add>",), ("<add>(",), row[None, :], "smollm2", row.size, vocab.fingerprint)
    generator = LearnedGenerator(model, tokenizer, vocab, learned)
    generation = generator.generate(_encode(PROMPT), max_new_tokens=24, stop_after_call=ToolkenGPT(funcqa_toolset()))
    text = generator.vocab.decode(generation.ids).decode()
    assert generator.events[0].name == "<add>" and text.startswith("<add>(")
    assert extended_vocabulary(vocab, ["<add>"]).special_id("<add>") == generator.width


def test_the_runtime_runs_the_call_and_writes_its_result(tmp_path: Path) -> None:
    model, tokenizer, vocab = llama()
    learned = LearnedTokens.trigger(_forcing_row(PROMPT), model="smollm2", vocab_fingerprint=vocab.fingerprint)
    learned.save(tmp_path / "t.npz")
    tools = funcqa_toolset()
    generator = LearnedGenerator(model, tokenizer, vocab, LearnedTokens.load(tmp_path / "t.npz"), stop=("\n",))
    decoder = learned_decoder(generator, tools, dialect=TriggerToolken(tools), constrained=True, max_new_tokens=48,
                              max_calls_per_turn=2)
    result = decoder.run(PROMPT)
    assert result.calls and result.calls[0].ok and result.trace.invalid_calls == 0
    record = result.calls[0]
    assert f")={record.observation}" in result.text  # the result follows the call, as FuncQA writes it


def test_rows_for_another_model_are_refused_before_decoding() -> None:
    model, tokenizer, vocab = llama()
    learned = LearnedTokens.trigger(np.zeros(896, dtype=np.float32), model="qwen", vocab_fingerprint="x")
    with pytest.raises(LearnedTokenError):
        LearnedGenerator(model, tokenizer, vocab, learned)


def _demos(tmp_path: Path) -> Path:
    """Six hand-written sums, each marked where its result is written (the call's place)."""
    lines = []
    for a, b in [(147, 354), (12, 30), (205, 17), (88, 913), (64, 36), (501, 499)]:
        text = f"Q: A shop sold {a} apples and {b} pears. How many fruits did it sell?\nA: It sold {a}+{b}="
        at = len(text)
        text += f"{a + b}."
        lines.append(json.dumps({"text": text, "calls": [{"at": at, "end": at + len(str(a + b)), "tool": "add"}]}))
    path = tmp_path / "demos.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_the_train_trigger_command_saves_rows_the_runtime_loads(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    from tooldec.cli import main

    out = tmp_path / "trigger.npz"
    assert main(["train-trigger", "--model", str(smollm2_gguf_path()), "--demos", str(_demos(tmp_path)),
                 "--out", str(out), "--threads", "1", "--max-tokens", "64"]) == 0
    assert "1 row(s) from 6 demonstrations (6 calls)" in capsys.readouterr().out
    learned = LearnedTokens.load(out)
    assert learned.names == ("<T>",) and learned.meta["training"]["loss_after"] < learned.meta["training"]["loss_before"]
    model, tokenizer, vocab = llama()
    LearnedGenerator(model, tokenizer, vocab, learned)  # the same model and vocabulary: accepted


def test_the_train_trigger_command_names_a_bad_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tooldec.cli import main

    demos = tmp_path / "demos.jsonl"
    demos.write_text('{"text": "Q: 1+1?\\nA: 2", "calls": [{"at": 11, "tool": "add"}]}\n{"text": "no calls key"}\n')
    assert main(["train-trigger", "--model", str(smollm2_gguf_path()), "--demos", str(demos),
                 "--out", str(tmp_path / "t.npz")]) == 2
    assert f"{demos}:2: not a demonstration" in capsys.readouterr().err
    assert not (tmp_path / "t.npz").exists()
