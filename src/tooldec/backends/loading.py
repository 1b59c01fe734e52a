"""Which backend runs a model, loading a model with it, and settling what is loaded. Each backend
is imported only when a model needs it, so torch is loaded only for a transformers model."""

from __future__ import annotations

import atexit
import gc
import importlib.util
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from ..tokens import Vocabulary
from .generation import TokenGenerator

__all__ = ["Backend", "generator_for", "load", "pick_backend", "settle"]


def generator_for(model: Any, tokenizer: Any, vocab: Vocabulary | None = None, *,
                  jump_forward: bool = True) -> TokenGenerator:
    """The generator that runs ``model``: llama.cpp for a ``llama_cpp.Llama``, else transformers."""
    from .llamacpp import LlamaCppGenerator, is_llama

    if is_llama(model):
        return LlamaCppGenerator(model, tokenizer, vocab, jump_forward=jump_forward)
    from .hf import HFGenerator

    return HFGenerator(model, tokenizer, vocab, jump_forward=jump_forward)


Backend = Literal["auto", "llamacpp", "transformers"]


def pick_backend(path: Path, backend: Backend = "auto") -> Literal["llamacpp", "transformers"]:
    """``auto``: llama.cpp for a GGUF file when llama-cpp-python is installed, else transformers.

    Examples:
        >>> pick_backend(Path("model-dir"))
        'transformers'
    """
    if backend != "auto":
        return backend
    if path.suffix == ".gguf" and importlib.util.find_spec("llama_cpp") is not None:
        return "llamacpp"
    return "transformers"


def load(path: str | Path, backend: Backend = "auto", *, threads: int | None = None,
         progress: Callable[[str], None] | None = None, context: int | None = None) -> tuple[Any, Any, Any, str]:
    """Load a model and its tokenizer with the backend ``backend`` (see :func:`pick_backend`).

    Args:
        threads: CPU threads (default: the backend's choice).
        progress: Told what is loading.
        context: llama.cpp's context window in tokens (default: ``llamacpp.DEFAULT_CONTEXT``);
            a transformers model's window is fixed by the model.

    Returns:
        ``(model, tokenizer, vocabulary padded to the logits, backend name)``.
    """
    path = Path(path)
    if pick_backend(path, backend) == "llamacpp":
        from .llamacpp import DEFAULT_CONTEXT, load_llama, vocabulary_for_llama

        llm, tokenizer = load_llama(path, threads=threads, progress=progress, n_ctx=context or DEFAULT_CONTEXT)
        loaded = llm, tokenizer, vocabulary_for_llama(llm, tokenizer), "llamacpp"
    else:
        from .hf import load_model, set_torch_threads, vocabulary_for

        if threads is not None:
            set_torch_threads(threads)
        model, tokenizer = load_model(path, progress=progress)
        loaded = model, tokenizer, vocabulary_for(model, tokenizer), "transformers"
    settle()
    return loaded


def settle() -> None:
    """Take what is alive now (the model, its tokenizer, their libraries: hundreds of thousands of
    objects) out of the garbage collector's reach, after one collection: with them, a full
    collection took ~200 ms inside a generation loop (``benchmarks/end_to_end.py --model smollm2``).
    Frozen, they are never freed before exit: call it once what is loaded lives as long as the
    process. Process-wide, like the collector itself."""
    gc.collect()
    gc.freeze()
    atexit.unregister(gc.unfreeze)  # once: at exit the frozen objects are collected again, so
    atexit.register(gc.unfreeze)  # extensions that check for leaks (triton's nanobind) find none
