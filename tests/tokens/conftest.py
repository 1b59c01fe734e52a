"""Reference tokenizers: the libraries the models ship with, used as oracles for token bytes."""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import pytest

from tooldec.models import mistral_tokenizer_path, smollm2_gguf_path, tokenizer_json_path
from tooldec.tokens import Vocabulary


@dataclass(frozen=True, repr=False)
class Reference:
    """A real tokenizer and the vocabulary tooldec read from the same files."""

    family: str
    vocab: Vocabulary
    encode: Callable[[str], list[int]]
    dummy_prefix: bool  # SentencePiece puts one "▁" (a space) before the first word
    normal_form: Literal["NFC"] | None  # the tokenizer's Unicode normalizer (Qwen: NFC)

    def __repr__(self) -> str:
        return f"Reference({self.family})"

    def expected(self, text: str) -> bytes:
        """The bytes the encoded ids must decode to."""
        if self.normal_form:
            text = unicodedata.normalize(self.normal_form, text)
        return (" " + text if self.dummy_prefix and text else text).encode("utf-8")


@pytest.fixture(scope="session")
def smollm2_tokenizer() -> Any:
    """The transformers tokenizer built from the SmolLM2 GGUF (transformers' own GGUF reader)."""
    from transformers import AutoTokenizer

    path = smollm2_gguf_path()
    return AutoTokenizer.from_pretrained(path.parent, gguf_file=path.name)


def _tokenizers_encoder(path: str) -> Callable[[str], list[int]]:
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(path)
    return lambda text: list(tokenizer.encode(text, add_special_tokens=False).ids)


@pytest.fixture(scope="session", params=["smollm2", "mistral", "llama3", "qwen"])
def reference(request: pytest.FixtureRequest) -> Reference:
    """Each real tokenizer with its encoder, in turn."""
    family: str = request.param
    vocab: Vocabulary = request.getfixturevalue(f"{family}_vocab")
    if family == "smollm2":
        tokenizer = request.getfixturevalue("smollm2_tokenizer")
        return Reference(family, vocab, lambda text: list(tokenizer.encode(text, add_special_tokens=False)), False, None)
    if family == "mistral":
        import sentencepiece

        processor = sentencepiece.SentencePieceProcessor(model_file=str(mistral_tokenizer_path("v3")))
        return Reference(family, vocab, lambda text: list(processor.encode(text)), True, None)
    json_family = "qwen3" if family == "qwen" else family
    encode = _tokenizers_encoder(str(tokenizer_json_path(json_family)))  # type: ignore[arg-type]
    return Reference(family, vocab, encode, False, "NFC" if family == "qwen" else None)
