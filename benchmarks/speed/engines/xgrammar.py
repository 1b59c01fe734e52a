"""XGrammar: a structural tag with ``triggered_tags`` (trigger ``<tool_call>``, one tag per tool).

This is how vLLM and SGLang constrain Hermes tool calls with XGrammar. The whole grammar, every
tool's argument schema included, is compiled up front; matchers are then cheap.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import xgrammar as xgr

from .base import HERMES_END, Engine, hermes_begin

__all__ = ["XGrammarEngine", "structural_tag"]


def structural_tag(tools: list[dict[str, Any]]) -> dict[str, Any]:
    """The structural tag of a Hermes tool inventory, as XGrammar's JSON form."""
    tags = [
        {
            "type": "tag",
            "begin": hermes_begin(tool["name"]),
            "content": {"type": "json_schema", "json_schema": tool["parameters"]},
            "end": HERMES_END,
        }
        for tool in tools
    ]
    fmt = {"type": "triggered_tags", "triggers": ["<tool_call>"], "tags": tags,
           "at_least_one": False, "stop_after_first": False}
    return {"type": "structural_tag", "format": fmt}


class XGrammarEngine(Engine):
    """Compile once with ``GrammarCompiler``; one ``GrammarMatcher`` per sequence."""

    name = "xgrammar"
    package = "xgrammar"

    def load_tokenizer(self, tokenizer_json: Path, hf_tokenizer: Any) -> None:
        self.vocab_size = len(hf_tokenizer)
        info = xgr.TokenizerInfo.from_huggingface(hf_tokenizer, vocab_size=self.vocab_size)
        self._compiler = xgr.GrammarCompiler(info)

    def compile(self, tools: list[dict[str, Any]]) -> None:
        self._compiled = self._compiler.compile_structural_tag(structural_tag(tools))

    def start(self) -> None:
        self._matcher = xgr.GrammarMatcher(self._compiled)

    def advance(self, token_id: int) -> bool:
        return bool(self._matcher.accept_token(token_id))

    def fill(self, bitmask: np.ndarray) -> None:
        self._matcher.fill_next_token_bitmask(bitmask, 0)
