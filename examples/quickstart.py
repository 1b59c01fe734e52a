"""The library API without a model: which tokens may come next, and moving through a call.

Run: .venv/bin/python examples/quickstart.py   (tests/test_examples.py runs it too)
"""

from typing import Literal

from tooldec import Grammar, Machine, ToolSet, load_vocabulary
from tooldec.dialects import Hermes
from tooldec.models import smollm2_gguf_path


def get_weather(city: str, unit: Literal["celsius", "fahrenheit"] = "celsius") -> dict:
    """Current weather in a city.

    Args:
        city: The city name, e.g. "Paris".
        unit: Temperature unit.
    """
    return {"city": city, "temperature": 21, "unit": unit}


tools = ToolSet([get_weather])  # also OpenAI / MCP / Anthropic dicts, Pydantic models, OpenAPI
vocab = load_vocabulary(smollm2_gguf_path())  # exact bytes of every token id
machine = Machine(Grammar(tools, vocab, Hermes()), tool_choice="required")

# the model may only start the call; after the name, only valid arguments
text = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "unit": "'
for byte_token in text.encode():  # one byte at a time here; any tokenization works
    assert machine.advance(vocab.token_bytes.index(bytes([byte_token])))
allowed = [vocab.token_bytes[i] for i in machine.allowed_token_ids()]
print(f"{len(allowed)} tokens allowed, e.g. {sorted(allowed)[:4]}")
assert all(b"celsius".startswith(t) or b"fahrenheit".startswith(t) for t in allowed)
print("shortest completion:", machine.shortest_completion(), "bytes")
