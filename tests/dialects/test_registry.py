"""The dialect registry: names, lookup, options and the error for an unknown name."""

from __future__ import annotations

import pytest

from tooldec.dialects import (
    DIALECTS,
    GLM45,
    DeepSeekV31,
    Dialect,
    GptOss,
    Hermes,
    KimiK2,
    Llama3Json,
    MiniMaxM2,
    Mistral,
    MistralTekken,
    Pythonic,
    Qwen3,
    Qwen3Coder,
    ReAct,
    ToolkenGPT,
    get_dialect,
)
from tooldec.errors import ToolDecError, UnknownDialectError
from tooldec.tools import Tool, ToolSet

EXPECTED = {
    "hermes": Hermes,
    "toolkengpt": ToolkenGPT,
    "react": ReAct,
    "llama3_json": Llama3Json,
    "mistral": Mistral,
    "pythonic": Pythonic,
    "qwen3": Qwen3,
    "qwen3_coder": Qwen3Coder,
    "glm45": GLM45,
    "minimax_m2": MiniMaxM2,
    "deepseek_v31": DeepSeekV31,
    "kimi_k2": KimiK2,
    "gpt_oss": GptOss,
    "mistral_tekken": MistralTekken,
}


def test_registry_holds_every_dialect_by_its_name() -> None:
    assert DIALECTS == EXPECTED
    for name, cls in DIALECTS.items():
        assert cls.name == name and issubclass(cls, Dialect)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_get_dialect_makes_an_instance(name: str) -> None:
    dialect = get_dialect(name)
    assert type(dialect) is EXPECTED[name]
    assert isinstance(dialect.head, bytes)
    assert dialect.trigger is None or dialect.trigger_bytes == dialect.trigger.encode()


def test_get_dialect_passes_options() -> None:
    tools = ToolSet()
    dialect = get_dialect("toolkengpt", tools=tools)
    tools.add(Tool.from_dict({"name": "sqrt", "parameters": {"type": "object", "properties": {"x": {"type": "number"}}}}))
    (call,) = dialect.parse_calls("<sqrt>(16)=4")
    assert dict(call.arguments) == {"x": 16}  # the ToolSet is read live


@pytest.mark.parametrize("name", ["json", "Hermes", "", "llama3"])
def test_unknown_name_lists_the_known_ones(name: str) -> None:
    with pytest.raises(UnknownDialectError) as info:
        get_dialect(name)
    assert isinstance(info.value, ToolDecError) and isinstance(info.value, LookupError)
    message = str(info.value)
    assert repr(name) in message
    assert all(known in message for known in EXPECTED)
