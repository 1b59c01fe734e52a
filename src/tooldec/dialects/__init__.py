"""Call formats: how a tool call is written, one class per format, looked up by name.

Examples:
    >>> sorted(DIALECTS)  # doctest: +NORMALIZE_WHITESPACE
    ['deepseek_v31', 'glm45', 'gpt_oss', 'hermes', 'kimi_k2', 'llama3_json', 'minimax_m2', 'mistral',
     'mistral_tekken', 'pythonic', 'qwen3', 'qwen3_coder', 'react', 'toolkengpt']
    >>> get_dialect("react")
    ReAct()
    >>> get_dialect("json")
    Traceback (most recent call last):
    ...
    tooldec.errors.UnknownDialectError: no dialect named 'json'; known: deepseek_v31, glm45, gpt_oss, hermes, kimi_k2, llama3_json, minimax_m2, mistral, mistral_tekken, pythonic, qwen3, qwen3_coder, react, toolkengpt
"""

from __future__ import annotations

from .base import NEXT_CALL, Dialect, Reasoning, ToolCall
from .declared import CallFormat, DeclaredDialect
from .detect import dialect_for
from .families import (
    DEEPSEEK_THINKING,
    GLM45,
    MAGISTRAL_THINKING,
    THINK,
    DeepSeekV31,
    GptOss,
    KimiK2,
    MiniMaxM2,
    MistralTekken,
    Qwen3,
    Qwen3Coder,
)
from .hermes import Hermes
from .llama3 import Llama3Json
from .mistral import Mistral
from .pythonic import Pythonic
from .react import ReAct
from .registry import DIALECTS, get_dialect
from .toolkengpt import ToolkenGPT

__all__ = [
    "DEEPSEEK_THINKING",
    "DIALECTS",
    "GLM45",
    "MAGISTRAL_THINKING",
    "NEXT_CALL",
    "THINK",
    "CallFormat",
    "DeclaredDialect",
    "DeepSeekV31",
    "Dialect",
    "GptOss",
    "Hermes",
    "KimiK2",
    "Llama3Json",
    "MiniMaxM2",
    "Mistral",
    "MistralTekken",
    "Pythonic",
    "Qwen3",
    "Qwen3Coder",
    "ReAct",
    "Reasoning",
    "ToolCall",
    "ToolkenGPT",
    "dialect_for",
    "get_dialect",
]
