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

