"""llguidance: a lazy Lark grammar with one ``%json`` per tool (its ``StructTag`` shape).

When the tags are single tokens of the vocabulary (Qwen's ``<tool_call>``, ``</tool_call>``)
they are matched as special tokens; otherwise the trigger is a lazy text lexeme, the form
llguidance documents for text triggers. llguidance builds its lexer lazily, so the first masks
carry part of the compile cost.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import llguidance
import llguidance.hf
import llguidance.numpy
import numpy as np

from .base import Engine, hermes_begin

__all__ = ["LLGuidanceEngine", "lark_grammar"]

TRIGGER = "<tool_call>"
END = "</tool_call>"


def lark_grammar(tools: list[dict[str, Any]], *, special: bool) -> str:
    """The lazy Lark grammar of a Hermes tool inventory: one trigger, then one ``%json`` per tool.

    This is llguidance's ``StructTag.to_grammar`` shape with the trigger shared by all tools
    (the helper repeats it per tool) and, when ``special``, the closing tag written as a token:
    Qwen's ``</tool_call>`` is a single added token, which text ``"</tool_call>"`` cannot match.
    """
    if special:
        head = f"start: (TEXT {TRIGGER} call)* TEXT\n"
        end = f'"}}\\n" {END}'
    else:
        head = f"start: (trigger call)* TEXT\ntrigger[lazy]: TEXT {json.dumps(TRIGGER)}\n"
        end = json.dumps("}\n" + END)
    lines = ["%llguidance {}", head + "TEXT: /(.|\\n)*/",
             "call: " + " | ".join(f"tool_{i}" for i in range(len(tools)))]
    for i, tool in enumerate(tools):
        begin = json.dumps(hermes_begin(tool["name"])[len(TRIGGER):])
        lines.append(f"tool_{i}: {begin} %json {json.dumps(tool['parameters'])} {end}")
    return "\n".join(lines) + "\n"


class LLGuidanceEngine(Engine):
    """One ``LLMatcher`` built from the grammar; each sequence starts from a copy of it."""

    name = "llguidance"
    package = "llguidance"

    def load_tokenizer(self, tokenizer_json: Path, hf_tokenizer: Any) -> None:
        self.vocab_size = len(hf_tokenizer)
        self._tok = llguidance.hf.from_tokenizer(hf_tokenizer, n_vocab=self.vocab_size)
        self._special = all(len(hf_tokenizer.encode(tag, add_special_tokens=False)) == 1
                            for tag in (TRIGGER, END))

    def compile(self, tools: list[dict[str, Any]]) -> None:
        grammar = lark_grammar(tools, special=self._special)
        matcher = llguidance.LLMatcher(self._tok, grammar, log_level=0)
        if matcher.is_error():
            raise RuntimeError(f"llguidance grammar error: {matcher.get_error()}")
        self._template = matcher

    def start(self) -> None:
        self._matcher = self._template.deep_copy()

    def advance(self, token_id: int) -> bool:
        return bool(self._matcher.consume_token(token_id))

    def fill(self, bitmask: np.ndarray) -> None:
        llguidance.numpy.fill_next_token_bitmask(self._matcher, bitmask, 0)
        if self._matcher.is_error():
            raise RuntimeError(f"llguidance matcher error: {self._matcher.get_error()}")
