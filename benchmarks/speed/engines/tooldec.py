"""tooldec: a ``Compiler`` per tokenizer (the vocabulary prepared once, timed apart), a snapshot
per inventory, a ``Machine`` per sequence.

Compiling is cheap by design (names sorted, tools checked, a key hashed); a tool's argument
automaton is built the first time the model chooses that tool, inside the per-token masks, and
is shared by every later snapshot that holds the same schema.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from tooldec.decoding import Compiler, Grammar, Machine
from tooldec.dialects import Hermes
from tooldec.tokens import from_tokenizer_json
from tooldec.tools import ToolSet

from .base import Engine

__all__ = ["ToolDecEngine"]


class ToolDecEngine(Engine):
    """One compiled snapshot per inventory; one ``Machine`` (tool_choice auto, parallel calls) per sequence."""

    name = "tooldec"
    package = "tooldec"

    def load_tokenizer(self, tokenizer_json: Path, hf_tokenizer: Any) -> None:
        self._vocab = from_tokenizer_json(tokenizer_json)
        self._compiler = Compiler(self._vocab, Hermes(openers=["tag"]))  # the vocabulary, prepared once
        self.vocab_size = max(int(self._vocab.size), len(hf_tokenizer))

    def register(self, tools: list[dict[str, Any]]) -> None:
        self._tools = ToolSet(tools)  # validation and normalisation of every schema

    def compile(self, tools: list[dict[str, Any]]) -> None:
        registered = getattr(self, "_tools", None)
        self._grammar: Grammar = self._compiler.compile(registered if registered is not None else ToolSet(tools))

    def start(self) -> None:
        self._machine = Machine(self._grammar)

    def advance(self, token_id: int) -> bool:
        return bool(self._machine.advance(token_id))

    def fill(self, bitmask: np.ndarray) -> None:
        self._machine.fill_bitmask(bitmask, row=0)
