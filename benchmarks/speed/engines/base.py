"""The contract every engine adapter meets, and the Hermes tags they share.

The harness times exactly these calls, so each adapter does its engine's natural thing and
nothing more: the first :meth:`Engine.compile` is the cold compile, :meth:`Engine.start` makes
the matcher of one new sequence from the compiled grammar (what a server does per request).
"""

from __future__ import annotations

import abc
import json
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

__all__ = ["HERMES_END", "Engine", "hermes_begin"]

HERMES_END = "}\n</tool_call>"


def hermes_begin(name: str) -> str:
    """The fixed text from the trigger to the arguments of tool ``name``."""
    return f'<tool_call>\n{{"name": {json.dumps(name)}, "arguments": '


class Engine(abc.ABC):
    """A constrained-decoding engine seen through one matcher at a time.

    ``trigger_mode`` is False for an engine without a free-text mode: it is fed only the call
    (``Case.call_tokens``), starting in tool mode.
    """

    name: ClassVar[str]
    package: ClassVar[str]
    trigger_mode: ClassVar[bool] = True
    vocab_size: int = 0

    @abc.abstractmethod
    def load_tokenizer(self, tokenizer_json: Path, hf_tokenizer: Any) -> None:
        """Build the engine's vocabulary object (timed apart from compiling)."""

    def register(self, tools: list[dict[str, Any]]) -> None:
        """Take in the tool definitions (validation, normalisation), timed apart from compiling.

        Engines that only see schemas when they compile do nothing here.
        """

    @abc.abstractmethod
    def compile(self, tools: list[dict[str, Any]]) -> None:
        """Compile the grammar of ``tools`` (name, description, parameters dicts)."""

    @abc.abstractmethod
    def start(self) -> None:
        """Begin a new sequence from the compiled grammar."""

    @abc.abstractmethod
    def advance(self, token_id: int) -> bool:
        """Consume one token; False when the engine rejects it."""

    @abc.abstractmethod
    def fill(self, bitmask: np.ndarray) -> None:
        """Write the next-token mask into row 0 of an int32 ``(1, ceil(vocab/32))`` array."""

    def version(self) -> str:
        """The installed version of the engine's package."""
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version(self.package)
        except PackageNotFoundError:
            return "unknown"
