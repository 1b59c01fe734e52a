"""tooldec: ``Grammar`` over the tool names only; argument automata are built on first use.

Compiling is cheap by design (names into a trie); the cost of a tool's argument automaton is
paid the first time the model chooses that tool, inside the per-token masks, and is then cached
for later sequences, which start from the same ``Grammar``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from tooldec.decoding import Grammar, Machine, prepare
from tooldec.dialects import Hermes
from tooldec.tokens import from_tokenizer_json
from tooldec.tools import ToolSet

from .base import Engine

__all__ = ["ToolDecEngine"]


class ToolDecEngine(Engine):
    """One ``Grammar`` per inventory; one ``Machine`` (tool_choice auto, parallel calls) per sequence."""

    name = "tooldec"
    package = "tooldec"

    def load_tokenizer(self, tokenizer_json: Path, hf_tokenizer: Any) -> None:
        self._vocab = from_tokenizer_json(tokenizer_json)
        prepare(self._vocab)  # the per-vocabulary index and string table, built once per tokenizer
        self.vocab_size = max(int(self._vocab.size), len(hf_tokenizer))

    def register(self, tools: list[dict[str, Any]]) -> None:
        self._tools = ToolSet(tools)  # validation and normalisation of every schema

    def compile(self, tools: list[dict[str, Any]]) -> None:
        registered = getattr(self, "_tools", None)
        self._grammar = Grammar(registered if registered is not None else ToolSet(tools), self._vocab, Hermes())

    def start(self) -> None:
        self._machine = Machine(self._grammar)

    def advance(self, token_id: int) -> bool:
        return bool(self._machine.advance(token_id))

    def fill(self, bitmask: np.ndarray) -> None:
        self._machine.fill_bitmask(bitmask, row=0)
