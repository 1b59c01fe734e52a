"""Every call format with a vLLM tool parser, read back by that parser: a few random outputs of
each (``tooldec.bench.walks.format_walk``) must give vLLM's parser (after its reasoning parser,
where the family has one) the calls tooldec's own reader finds. ``benchmarks/formats.py`` runs
many more, on each family's own tokenizer (run in .venv-vllm: ``make test-vllm``); gpt-oss is
checked against openai-harmony in ``tests/dialects/test_harmony_reference.py``."""

from __future__ import annotations

import importlib.util
import json
import random
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from benchmarks.format_walks import format_walk, salient_tokens, single_tokens, with_specials
from tooldec.decoding import Compiler
from tooldec.dialects import DEEPSEEK_THINKING, Hermes, Llama3Json, Pythonic, Qwen3, ToolCall, get_dialect
from tooldec.models import tokenizer_json_path
from tooldec.tokens import Vocabulary, from_tokenizer_json

from .helpers import TOOLS

pytestmark = pytest.mark.vllm
WALKS = 4
SEARCH = {"type": "function", "function": {"name": "search_docs", "description": "Search.", "parameters": {
    "type": "object", "properties": {"query": {"type": "string"}, "exact": {"type": "boolean"},
                                     "filters": {"type": "object", "properties": {"year": {"type": "integer"}}},
                                     "tags": {"type": "array", "items": {"type": "string"}}},
    "required": ["query"]}}}
FORMATS: dict[str, tuple[Any, str, str | None]] = {
    "hermes": (lambda: Hermes(openers=["tag"]), "hermes", None),
    "qwen3": (lambda: Qwen3(openers=["tag"]), "hermes", "qwen3"),
    "qwen3_coder": (lambda: get_dialect("qwen3_coder"), "qwen3_coder", None),
    "glm45": (lambda: get_dialect("glm45"), "glm45", "glm45"),
    "minimax_m2": (lambda: get_dialect("minimax_m2"), "minimax_m2", "minimax_m2"),
    "kimi_k2": (lambda: get_dialect("kimi_k2"), "kimi_k2", None),
    "deepseek_v31": (lambda: get_dialect("deepseek_v31"), "deepseek_v31", None),
    "deepseek_v31_thinking": (lambda: get_dialect("deepseek_v31", reasoning=DEEPSEEK_THINKING), "deepseek_v31", "deepseek_r1"),
    "mistral_tekken": (lambda: get_dialect("mistral_tekken"), "mistral", None),
    "llama3_json": (lambda: Llama3Json(openers=["python_tag"]), "llama3_json", None),
    "pythonic": (Pythonic, "pythonic", None),
}
"""The dialect (with the openers vLLM's parser reads), vLLM's tool parser, its reasoning parser."""


@pytest.fixture(scope="module")
def reference() -> ModuleType:
    """``benchmarks/vllm_reference.py``: vLLM's parsers over texts."""
    path = Path(__file__).resolve().parents[2] / "benchmarks" / "vllm_reference.py"
    spec = importlib.util.spec_from_file_location("vllm_reference", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def qwen() -> Vocabulary:
    return from_tokenizer_json(tokenizer_json_path("qwen3"))


@pytest.mark.parametrize("name", list(FORMATS))
def test_vllm_reads_the_calls_tooldec_reads(name: str, qwen: Vocabulary, reference: ModuleType) -> None:
    make, parser, reasoning_parser = FORMATS[name]
    dialect = make()
    tools = [*TOOLS, SEARCH]
    grammar = Compiler(with_specials(qwen, single_tokens(dialect)), dialect).compile(tools)
    salient = salient_tokens(grammar, ToolCall("get_weather", {"city": "x"}))
    choices = ("required", "auto") if dialect.opens_in_text else ("required",)
    rng = random.Random(f"vllm-formats-{name}")
    walks = [format_walk(grammar, rng, choices[i % len(choices)], salient, extra=30) for i in range(WALKS)]
    request = {"parser": parser, "reasoning_parser": reasoning_parser, "tokenizer": str(tokenizer_json_path("qwen3")),
               "added": single_tokens(dialect), "tools": tools, "texts": [w.text for w in walks]}
    opener = dialect.trigger or ""
    same = 0
    for walk, read in zip(walks, reference.read_all(request)):
        ours = [(c.name, dict(c.arguments)) for c in dialect.scan(walk.text, grammar.tools).calls]
        theirs = [(n, json.loads(a)) for n, a in read["calls"]]
        assert walk.choice == "auto" or ours, walk.text
        if ours != theirs:  # only where vLLM's parser reads otherwise by design (docs/call-formats.md)
            inside = bool(opener) and opener in dialect.split_reasoning(walk.text)[1]
            reason = reference.differs_by_design(parser, reasoning_parser, walk.text, [n for n, _ in ours], inside)
            assert reason is not None, (walk.text, ours, read)
        else:
            same += bool(ours)
    assert same, "no walk with a call read the same"
