"""The ``gpt_oss`` format read back by OpenAI's own harmony parser (``openai-harmony``, the
reference renderer and parser of gpt-oss): random whole outputs on gpt-oss's own vocabulary, the
analysis channel opened in half of them, must give harmony the calls tooldec reads.
``benchmarks/formats.py`` runs many more."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from benchmarks.format_walks import format_walk, salient_tokens
from benchmarks.harmony import HarmonyReader
from tooldec.decoding import Compiler
from tooldec.dialects import GptOss, ToolCall
from tooldec.tokens import Vocabulary

from .test_families import TOOLS

pytest.importorskip("openai_harmony")
WALKS = 8


@pytest.fixture(scope="module")
def harmony(gptoss_vocab: Vocabulary, tmp_path_factory: pytest.TempPathFactory) -> HarmonyReader:
    """Harmony on o200k_base rebuilt from gpt-oss's tokenizer.json (its sha256 checked)."""
    return HarmonyReader(gptoss_vocab, Path(tmp_path_factory.mktemp("tiktoken")))


def test_harmony_reads_the_calls_tooldec_reads(gptoss_vocab: Vocabulary, harmony: HarmonyReader) -> None:
    dialect = GptOss()
    grammar = Compiler(gptoss_vocab, dialect).compile(TOOLS)
    salient = salient_tokens(grammar, ToolCall("get_weather", {"city": "x"}))
    rng = random.Random("harmony-reference")
    called = 0
    for i in range(WALKS):
        walk = format_walk(grammar, rng, ("required", "auto")[i % 2], salient, extra=30)
        ours = [(c.name, dict(c.arguments)) for c in dialect.scan(walk.text, grammar.tools).calls]
        theirs = harmony.read(walk.tokens)
        assert theirs.error is None or not walk.finished, (walk.text, theirs.error)  # a cut output is no message
        assert ours == theirs.calls, walk.text
        assert len(ours) == walk.calls_completed, walk.text
        called += bool(ours)
    assert called >= WALKS // 2  # every required walk closes a call



def test_the_analysis_channel_holds_no_harmony_marker_but_its_close(gptoss_vocab: Vocabulary) -> None:
    """Harmony ends a message at any of its special tokens: inside the analysis channel the model
    may not write ``<|call|>`` or ``<|channel|>``, and ``<|end|>`` only as the start of the close
    ``<|end|><|start|>assistant`` (then nothing else, not even a token without bytes)."""
    from tooldec.decoding import Machine

    dialect = GptOss()
    grammar = Compiler(gptoss_vocab, dialect).compile(TOOLS)
    special = {text: tid for tid, text in gptoss_vocab.special.items()}
    machine = Machine(grammar, tool_choice="auto")
    assert machine.accept_string(dialect.spelled("<|channel|>analysis<|message|>Let me think"))
    assert machine.advanced.mode.value == "reasoning"
    allowed = set(machine.allowed_token_ids().tolist())
    for marker in ("<|call|>", "<|channel|>", "<|message|>", "<|start|>", "<|constrain|>"):
        assert special[marker] not in allowed, marker
        assert not machine.fork().advance(special[marker]), marker
    assert special["<|end|>"] in allowed
    assert machine.advance(special["<|end|>"])
    allowed = machine.allowed_token_ids().tolist()
    assert allowed == [special["<|start|>"]]
    assert not machine.fork().advance(special["<|reserved_200017|>"])  # no bytes, still not the close
    assert machine.advance(special["<|start|>"]) and machine.accept_string(b"assistant")
    assert machine.advanced.mode.value == "text"
