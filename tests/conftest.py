"""Session-wide fixtures: real vocabularies from installed packages (no downloads, no stubs).

``any_vocab`` runs a test once per tokenizer family that tooldec must handle exactly:
byte-level BPE with a 49k vocabulary and missing byte tokens (SmolLM2), SentencePiece with byte
fallback and control tokens (Mistral v3), and the large byte-level vocabularies of Llama-3 (128k)
and Qwen3 (151k). A missing package fails the fixture with the install command (`make setup`).

``data_dir`` is the benchmark data: the full sets when ``benchmarks.paper.datasets.find_data_dir``
finds them, else the few items of each set in ``tests/fixtures/data`` (same layout, see
``tests/fixtures/make_data.py``), so a fresh clone runs the data tests too. ``full_data`` says
which; a test that pins a count of the whole set checks it only on the full data.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.paper.datasets import find_data_dir
from tooldec.models import mistral_tokenizer_path, smollm2_gguf_path, tokenizer_json_path
from tooldec.tokens import Vocabulary, from_gguf, from_sentencepiece, from_tokenizer_json

VOCAB_FAMILIES = ("smollm2", "mistral", "llama3", "qwen")
FIXTURE_DATA = Path(__file__).resolve().parent / "fixtures" / "data"
"""A few items of each benchmark set, in the upstream layout (each folder says where from)."""


def benchmark_data() -> tuple[Path, bool]:
    """``(folder, is_full)``: the full sets if found, else the fixtures.

    Raises:
        pytest.UsageError: ``$TOOLDEC_DATA`` names a folder that does not exist.
    """
    full = find_data_dir()
    if full is None:
        return FIXTURE_DATA, False
    if not full.is_dir():
        raise pytest.UsageError(f"TOOLDEC_DATA={full} is not a folder; unset it to use tests/fixtures/data")
    return full, True


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """The benchmark data: the full sets if ``find_data_dir`` finds them, else the fixtures."""
    return benchmark_data()[0]


@pytest.fixture(scope="session")
def full_data() -> bool:
    """Whether ``data_dir`` holds the full sets (counts of a whole set hold only there)."""
    return benchmark_data()[1]


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
