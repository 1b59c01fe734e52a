"""outlines-core: one regex for the whole call, compiled to a token index up front.

outlines-core has no free-text mode, so it is measured in tool mode only: its guide starts at
the trigger and is fed the call alone (``Case.call_tokens``). The regex is the alternation of
``<tool_call>\\n{"name": "N", "arguments": ARGS}\\n</tool_call>`` over the tools, with ARGS
from outlines-core's own JSON Schema to regex translation.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import outlines_core
from outlines_core.json_schema import build_regex_from_schema

from .base import HERMES_END, Engine, hermes_begin

__all__ = ["OutlinesCoreEngine", "call_regex", "token_bytes"]

_META = set("\\.+*?()|[]{}^$#&-~")


def _escape(text: str) -> str:
    """Escape a literal for Rust's ``regex`` syntax (Python's ``re.escape`` differs on newline)."""
    return "".join("\\n" if c == "\n" else f"\\{c}" if c in _META else c for c in text)


def call_regex(tools: list[dict[str, Any]]) -> str:
    """The regex of one Hermes call to any of ``tools``."""
    parts = [
        _escape(hermes_begin(tool["name"]))
        + f"({build_regex_from_schema(json.dumps(tool['parameters']))})"
        + _escape(HERMES_END)
        for tool in tools
    ]
    return "(" + "|".join(parts) + ")"


def _byte_decoder() -> dict[str, int]:
    """GPT-2's byte-level alphabet, inverted: the printable stand-in character -> its byte."""
    keep = list(range(33, 127)) + list(range(161, 173)) + list(range(174, 256))
    chars, extra = list(keep), 0
    for b in range(256):
        if b not in keep:
            keep.append(b)
            chars.append(256 + extra)
            extra += 1
    return {chr(c): b for b, c in zip(keep, chars)}


def token_bytes(hf_tokenizer: Any) -> dict[bytes, list[int]]:
    """Every token's bytes (byte-level BPE), added tokens as their text, the EOS left out."""
    decoder = _byte_decoder()
    added = {tok.content: idx for idx, tok in hf_tokenizer.added_tokens_decoder.items()}
    out: dict[bytes, list[int]] = {}
    for token, idx in hf_tokenizer.get_vocab().items():
        if idx == hf_tokenizer.eos_token_id:
            continue
        if token in added:
            raw = token.encode("utf-8")
        else:
            try:
                raw = bytes(decoder[c] for c in token)
            except KeyError:
                continue
        out.setdefault(raw, []).append(idx)
    return out


class OutlinesCoreEngine(Engine):
    """``Index(regex, vocabulary)`` once; one ``Guide`` per sequence."""

    name = "outlines-core"
    package = "outlines-core"
    trigger_mode = False

    def load_tokenizer(self, tokenizer_json: Path, hf_tokenizer: Any) -> None:
        self.vocab_size = len(hf_tokenizer)
        self._vocab = outlines_core.Vocabulary(hf_tokenizer.eos_token_id, token_bytes(hf_tokenizer))

    def compile(self, tools: list[dict[str, Any]]) -> None:
        self._index = outlines_core.Index(call_regex(tools), self._vocab)

    def start(self) -> None:
        self._guide = outlines_core.Guide(self._index)

    def advance(self, token_id: int) -> bool:
        try:
            self._guide.advance(token_id, return_tokens=False)
        except ValueError:
            return False
        return True

    def fill(self, bitmask: np.ndarray) -> None:
        row = bitmask[0]
        self._guide.write_mask_into(row.ctypes.data, row.size, row.itemsize)
