"""Session-wide fixtures: real vocabularies from installed packages (no downloads, no stubs).

``any_vocab`` runs a test once per tokenizer family that tooldec must handle exactly:
byte-level BPE with a 49k vocabulary and missing byte tokens (SmolLM2), SentencePiece with byte
fallback and control tokens (Mistral v3), and the large byte-level vocabularies of Llama-3 (128k)
and Qwen3 (151k). A missing package fails the fixture with the install command (`make setup`).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tooldec.bench.datasets import data_dir as bench_data_dir

from tooldec.models import mistral_tokenizer_path, smollm2_gguf_path, tokenizer_json_path
from tooldec.tokens import Vocabulary, from_gguf, from_sentencepiece, from_tokenizer_json

VOCAB_FAMILIES = ("smollm2", "mistral", "llama3", "qwen")


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """The benchmark data (``$TOOLDEC_DATA`` or ``../shared/data``); tests that need it skip without it."""
    path = bench_data_dir()
    if not path.is_dir():
        pytest.skip(f"benchmark data not found at {path} (set TOOLDEC_DATA)")
    return path


@pytest.fixture(scope="session")
def smollm2_vocab() -> Vocabulary:
    """SmolLM2-135M-Instruct (byte-level, 49,152 ids; <|im_end|> ends a turn), read from its GGUF."""
    return from_gguf(smollm2_gguf_path())


@pytest.fixture(scope="session")
def mistral_vocab() -> Vocabulary:
    """Mistral v3 SentencePiece (32,768 ids; [TOOL_CALLS] and [INST] are control tokens)."""
    return from_sentencepiece(mistral_tokenizer_path("v3"))


@pytest.fixture(scope="session")
def llama3_vocab() -> Vocabulary:
    """Llama-3 (byte-level, 128,256 ids; <|eot_id|> ends a turn)."""
    return from_tokenizer_json(tokenizer_json_path("llama3"))


@pytest.fixture(scope="session")
def qwen_vocab() -> Vocabulary:
    """Qwen3 (byte-level, 151,669 ids; <tool_call> is a non-special added token)."""
    return from_tokenizer_json(tokenizer_json_path("qwen3"))


@pytest.fixture(scope="session", params=VOCAB_FAMILIES)
def any_vocab(request: pytest.FixtureRequest) -> Vocabulary:
    """Each of the four real vocabularies in turn."""
    vocab: Vocabulary = request.getfixturevalue(f"{request.param}_vocab")
    return vocab
