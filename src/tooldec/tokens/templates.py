"""A model's chat template, read from where its vocabulary comes from (which call format it
writes shows there: ``tooldec.dialects.dialect_for``)."""

from __future__ import annotations

import json
from pathlib import Path

from ._gguf import read_gguf_metadata

__all__ = ["chat_template"]


def chat_template(path: str | Path) -> str:
    """The chat template of a GGUF file (``tokenizer.chat_template``) or of a Hugging Face folder
    or ``tokenizer.json`` (the ``tokenizer_config.json`` beside it); ``''`` where there is none."""
    source = Path(path)
    if source.suffix == ".gguf":
        found = read_gguf_metadata(source).get("tokenizer.chat_template")
        return found if isinstance(found, str) else ""
    config = (source if source.is_dir() else source.parent) / "tokenizer_config.json"
    if not config.is_file():
        return ""
    template = json.loads(config.read_text(encoding="utf-8")).get("chat_template") or ""
    return template if isinstance(template, str) else json.dumps(template)
