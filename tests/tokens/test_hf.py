"""from_hf_tokenizer agrees with the file loaders on the same tokenizers."""

from __future__ import annotations

from typing import Any

import pytest

from tooldec.errors import TokenizerError
from tooldec.models import tokenizer_json_path
from tooldec.tokens import Vocabulary
from tooldec.tokens.hf import from_hf_tokenizer


def _same(a: Vocabulary, b: Vocabulary) -> None:
    assert (a.token_bytes, dict(a.special), a.eos_ids, a.kind) == (b.token_bytes, dict(b.special), b.eos_ids, b.kind)


def test_transformers_gguf_tokenizer_matches_our_gguf_reader(smollm2_tokenizer: Any, smollm2_vocab: Vocabulary) -> None:
    _same(from_hf_tokenizer(smollm2_tokenizer), smollm2_vocab)


def test_qwen_auto_tokenizer_matches_tokenizer_json_and_pads_to_the_logits_width(qwen_vocab: Vocabulary) -> None:
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tokenizer_json_path("qwen3").parent)
    _same(from_hf_tokenizer(tokenizer), qwen_vocab)
    wide = from_hf_tokenizer(tokenizer, vocab_size=151_936)  # Qwen3's model.config.vocab_size
    assert wide.size == 151_936 and set(wide.token_bytes[qwen_vocab.size :]) == {None}
    with pytest.raises(TokenizerError, match="cannot pad"):
        from_hf_tokenizer(tokenizer, vocab_size=1000)


def test_an_object_without_a_backend_is_rejected() -> None:
    with pytest.raises(TokenizerError, match="neither a fast backend"):
        from_hf_tokenizer(object())
