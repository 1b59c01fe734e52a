"""Jump-forward: the tokens of the bytes the grammar forces, a draft for a loop to evaluate in one
batch and confirm by the model's picks (docs/library.md, "The tool loop"). The tokens are the
tokenizer's own encoding of the bytes, what the model is trained to write. Two boundaries need
care, as in XGrammar's jump-forward and llguidance's fast-forward tokens:

* the start: what the model already wrote is never tokenised again (no rollback), so the span
  begins at the last token's end;
* the end: the tokenizer reads only the span, while the model could write a longer token across
  its end (``{"`` then ``\\n``). The last token is dropped when a longer vocabulary token starts
  with it; the model then writes it, one pass as before.

Every token is checked by the cursor under the budget the loop passes (``advance_within``), so a
span never takes a token the masks would refuse, nor one past the room a call needs to close.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..decoding import Machine

__all__ = ["Encoder", "encoder_of", "forced_tokens"]

Encoder = Callable[[str], list[int]]
"""Text to the tokenizer's own ids, no special tokens added (no BOS)."""

MOST_BYTES = 512
"""The longest span asked for at once: a call's framing is far shorter; a longer one is taken in pieces."""


def encoder_of(tokenizer: Any) -> Encoder | None:
    """The encode of a transformers tokenizer (``None`` if it has none)."""
    encode = getattr(tokenizer, "encode", None)
    if encode is None:
        return None

    def encoder(text: str) -> list[int]:
        return list(encode(text, add_special_tokens=False))

    return encoder


def forced_tokens(machine: Machine, encode: Encoder, budget: int, most: int | None = None) -> list[int]:
    """The canonical tokens of the bytes forced at ``machine``'s position, at most ``most``, each
    accepted in turn within what is left of ``budget`` (tokens the loop may still take); the
    cursor is left where it was. Empty where nothing is forced or the span's tokens do not fit."""
    if budget < 1:
        return []
    data = machine.advanced.forced_bytes(MOST_BYTES)
    if not data:
        return []
    text = _whole_characters(data)
    if not text:
        return []
    vocab = machine.advanced.grammar.vocab
    token_bytes = vocab.token_bytes
    ids = encode(text)
    taken: list[int] = []
    end = 0  # bytes the tokens taken spell
    for token in ids:  # the tokens that spell the span from its start (a tokenizer's added prefix stops it)
        piece = token_bytes[token] if 0 <= token < len(token_bytes) else None
        if not piece or not data.startswith(piece, end):
            break
        taken.append(token)
        end += len(piece)
    if taken and vocab.extends(token_bytes[taken[-1]] or b""):
        taken.pop()  # the model may write a longer token across the end
    accepted = 0
    for token in taken[:budget if most is None else min(budget, most)]:
        if not machine.advanced.advance_within(token, budget - accepted):
            break
        accepted += 1
    if accepted:
        machine.rollback(accepted)
    return taken[:accepted]


def _whole_characters(data: bytes) -> str:
    """``data`` as text, less a character its end cuts in two (a tokenizer reads text)."""
    for cut in range(4):
        try:
            return data[: len(data) - cut].decode()
        except UnicodeDecodeError:
            continue
    return ""
