"""What every backend's ``generate`` returns, and the choice of backend for a loaded model."""

from __future__ import annotations

import atexit
import gc
import importlib.util
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

__all__ = ["Backend", "Generation", "generator_for", "load", "pick_backend", "settle"]


@dataclass(frozen=True)
class Generation:
    """The new tokens of one ``generate`` call and what it cost.

    Attributes:
        ids: Tokens after the prompt, up to and including the end-of-sequence token if one was
            generated (the padding after it is dropped).
        ended: The model emitted an end-of-sequence token.
        call_closed: Generation stopped because a call closed (``stop_after_call`` dialects).
        masking_seconds: Time the generation loop spent masking (0 when unconstrained): waiting
            for the mask, picking from it, advancing the machine.
        masked_steps: Steps that were masked (0 when unconstrained).
        overlapped_seconds: Time masks took on a worker thread while the model evaluated the
            previous token (llama.cpp with ``mask_worker``); not in ``masking_seconds`` unless the
            loop waited for it. Without the worker, masks are computed after the evaluation and
            counted in ``masking_seconds``.
        checked_steps: Of ``masked_steps``, those where the model's own pick was allowed and taken
            without a mask (llama.cpp's ``check_first``); that pick, the one any decoding loop
            makes, is not in ``masking_seconds``, checking it is.
    """

    ids: list[int]
    ended: bool
    call_closed: bool
    masking_seconds: float
    masked_steps: int
    overlapped_seconds: float = 0.0
    checked_steps: int = 0


def generator_for(model: Any, tokenizer: Any, vocab: Any = None) -> Any:
    """The generator that runs ``model``: llama.cpp for a ``llama_cpp.Llama``, else transformers.

    Imports the backend only then, so torch is loaded only for a transformers model.
    """
    from .llamacpp import LlamaCppGenerator, is_llama

    if is_llama(model):
        return LlamaCppGenerator(model, tokenizer, vocab)
    from .hf import HFGenerator

    return HFGenerator(model, tokenizer, vocab)


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
        path: A ``.gguf`` file or a transformers model folder.
        backend: ``llamacpp``, ``transformers`` or ``auto``.
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
    """Take what is alive now (the model, its tokenizer, the libraries behind them: hundreds of
    thousands of objects) out of the garbage collector's generations, after one collection.

    A full collection traverses every tracked object; with these in it, one took ~200 ms inside
    a generation loop (SmolLM2 on llama.cpp, ``python benchmarks/end_to_end.py --model smollm2``). Frozen, they are never
    traversed again, nor freed before exit: call this once what is loaded lives as long as the
    process, as a loader or a server's start-up does. Process-wide, like the collector itself.
    """
    gc.collect()
    gc.freeze()
    atexit.unregister(gc.unfreeze)  # once: at exit the frozen objects are collected again, so
    atexit.register(gc.unfreeze)  # extensions that check for leaks (triton's nanobind) find none
