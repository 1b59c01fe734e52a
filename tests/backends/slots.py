"""The embedded SmolLM2 on llama.cpp, loaded once, and what the slot tests share: a chat prompt's
tokens and a prompt read into a slot of a ``SlotBatch``."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from tooldec.backends.llamabatch import SlotBatch
from tooldec.backends.llamacpp import load_llama
from tooldec.models import smollm2_gguf_path


@functools.cache
def loaded() -> tuple[Any, Any]:
    """``(llm, tokenizer)``: SmolLM2 on llama.cpp with a context of 1,024 positions, one thread."""
    return load_llama(smollm2_gguf_path(), n_ctx=1024, threads=1)


def chat(messages: list[dict[str, str]]) -> list[int]:
    """The tokens of ``messages`` through SmolLM2's chat template, ready for the answer."""
    _, tokenizer = loaded()
    rendered = tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
    return list(tokenizer.encode(rendered, add_special_tokens=False))


def read(slots: SlotBatch, slot: int, ids: list[int]) -> np.ndarray:
    """Give ``slot`` the prompt ``ids``, step until it is evaluated; the logits after it."""
    slots.begin(slot, ids)
    first = None
    while first is None:
        _, first = slots.step([], slot)
    return first
