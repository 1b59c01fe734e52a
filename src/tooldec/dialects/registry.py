"""Every built-in dialect by name (``tooldec serve --dialect``, ``get_dialect``)."""

from __future__ import annotations

from typing import Any

from ..errors import UnknownDialectError
from .base import Dialect
from .families import GLM45, DeepSeekV31, GptOss, KimiK2, MiniMaxM2, MistralTekken, Qwen3, Qwen3Coder
from .hermes import Hermes
from .llama3 import Llama3Json
from .mistral import Mistral
from .pythonic import Pythonic
from .react import ReAct
from .toolkengpt import ToolkenGPT

__all__ = ["DIALECTS", "get_dialect"]

DIALECTS: dict[str, type[Dialect]] = {cls.name: cls for cls in (
    Hermes, Qwen3, Qwen3Coder, GLM45, MiniMaxM2, DeepSeekV31, KimiK2, GptOss, MistralTekken, Llama3Json, Mistral,
    Pythonic, ToolkenGPT, ReAct)}
"""Every built-in dialect class by its ``name``."""


def get_dialect(name: str, **options: Any) -> Dialect:
    """The dialect called ``name``, made with ``options`` (e.g. ``tools=`` for ToolkenGPT).

    Raises:
        UnknownDialectError: No dialect has that name; the message lists the names there are.
    """
    cls = DIALECTS.get(name)
    if cls is None:
        raise UnknownDialectError(f"no dialect named {name!r}; known: {', '.join(sorted(DIALECTS))}")
    return cls(**options)
