"""Build a ``Vocabulary`` from a Hugging Face transformers tokenizer object.

The only module of ``tooldec.tokens`` that touches transformers, and only through the object it
is given: nothing is imported at module top, so ``import tooldec.tokens`` stays light.
"""

from __future__ import annotations

import json
from typing import Any

from tooldec.errors import TokenizerError
from tooldec.tokens.loaders import vocabulary_from_sentencepiece_processor, vocabulary_from_tokenizer_data
from tooldec.tokens.vocabulary import Vocabulary

__all__ = ["from_hf_tokenizer"]


def from_hf_tokenizer(tokenizer: Any, *, vocab_size: int | None = None) -> Vocabulary:
    """The vocabulary of a transformers tokenizer: a fast one's read as its ``tokenizer.json``
    (as ``from_tokenizer_json`` reads it), a slow one's through its ``sp_model``.

    Pass the model's ``vocab_size`` where its logits are wider than the tokenizer (Qwen3: 151,936
    vs 151,669): masks must be that wide (``Vocabulary.padded``).

    Raises:
        TokenizerError: Neither a ``tokenizers`` backend nor a SentencePiece model, or
            ``vocab_size`` is smaller than the tokenizer.
    """
    name = str(getattr(tokenizer, "name_or_path", "") or type(tokenizer).__name__)
    eos = getattr(tokenizer, "eos_token_id", None)
    eos_ids = [eos] if isinstance(eos, int) else [i for i in eos or [] if isinstance(i, int)]
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is not None:
        data = json.loads(backend.to_str())
        vocab = vocabulary_from_tokenizer_data(data, name=name, eos_ids=eos_ids)
    elif getattr(tokenizer, "sp_model", None) is not None:
        vocab = vocabulary_from_sentencepiece_processor(tokenizer.sp_model, name=name)
    else:
        raise TokenizerError(
            f"{name}: {type(tokenizer).__name__} has neither a fast backend (tokenizer.json) nor a "
            "SentencePiece model; load the tokenizer with use_fast=True or pass its tokenizer file to load_vocabulary"
        )
    return vocab.padded(vocab_size) if vocab_size is not None else vocab
