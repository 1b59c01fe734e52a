"""Keeping the turn inside the model's context window: a tool result longer than a share of the
room left (a 40 KB web page) is cut, in the model's own tokens, and the cut says so."""

from __future__ import annotations

from typing import Any

__all__ = ["context_window", "truncate_tokens"]

#: Tokens a "the result was cut" note may take; the note is written in these words.
_NOTE = "\n[truncated by tooldec: the result had {total} tokens; the first {kept} are shown]"
_NOTE_TOKENS = 32
#: Tokenizers report a huge number (1e30) when they do not know their limit.
_UNKNOWN = 10**8


def context_window(model: Any, tokenizer: Any) -> int | None:
    """The context window in tokens as the backend loaded it (llama.cpp's ``n_ctx``; transformers'
    ``max_position_embeddings``, else the tokenizer's ``model_max_length``); ``None`` if unknown."""
    n_ctx = getattr(model, "n_ctx", None)
    if callable(n_ctx):
        return int(n_ctx())
    config = getattr(model, "config", None)
    for value in (getattr(config, "max_position_embeddings", None), getattr(tokenizer, "model_max_length", None)):
        if isinstance(value, int) and 0 < value < _UNKNOWN:
            return value
    return None


def truncate_tokens(text: str, tokenizer: Any, limit: int) -> tuple[str, int | None]:
    """``(text, None)`` when ``text`` fits in ``limit`` tokens of ``tokenizer``, else ``(its first
    tokens + a note saying it was cut, the tokens it had)``; the note counts in ``limit``."""
    ids = list(tokenizer.encode(text, add_special_tokens=False))
    if len(ids) <= limit:
        return text, None
    kept = max(limit - _NOTE_TOKENS, 0)
    head = str(tokenizer.decode(ids[:kept], skip_special_tokens=False)) if kept else ""
    head = head.rstrip("\ufffd")  # a character cut in the middle
    return head + _NOTE.format(total=len(ids), kept=kept), len(ids)
