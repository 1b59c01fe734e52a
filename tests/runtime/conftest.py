"""Fixtures of the runtime tests: the real SmolLM2 model (loaded once per session)."""

from __future__ import annotations

from typing import Any

import pytest
from backends.smollm2 import smollm2  # the module pytest imported for tests/backends (one cache)

from tooldec.tokens import Vocabulary


@pytest.fixture(scope="session")
def smollm2_model() -> tuple[Any, Any, Vocabulary]:
    """``(model, tokenizer, vocab)`` of SmolLM2-135M-Instruct."""
    return smollm2()
