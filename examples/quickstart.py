"""The library API without a model: which tokens may come next, and moving through a call.

Run: .venv/bin/python examples/quickstart.py   (tests/test_examples.py runs it too)
"""

from typing import Literal

from tooldec import Compiler, Machine, load_vocabulary
from tooldec.decoding import allocate_token_bitmask, unpack_bitmask
from tooldec.dialects import Hermes
from tooldec.models import smollm2_gguf_path


def get_weather(city: str, unit: Literal["celsius", "fahrenheit"] = "celsius") -> dict:
    """Current weather in a city.

    Args:
        city: The city name, e.g. "Paris".
        unit: Temperature unit.
    """
    return {"city": city, "temperature": 21, "unit": unit}


vocab = load_vocabulary(smollm2_gguf_path())  # exact bytes of every token id
compiler = Compiler(vocab, Hermes())  # prepared once per vocabulary; shareable by threads
grammar = compiler.compile([get_weather])  # also OpenAI / MCP / Anthropic dicts, Pydantic models, OpenAPI
machine = Machine(grammar, tool_choice="required")  # one cursor per sequence

# the model may only start the call; after the name, only valid arguments
assert machine.accept_string('<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "unit": "')
bitmask = allocate_token_bitmask(1, vocab.size)
machine.fill_bitmask(bitmask)
allowed = [vocab.token_bytes[i] for i in unpack_bitmask(bitmask[0], vocab.size).nonzero()[0]]
print(f"{len(allowed)} tokens allowed, e.g. {sorted(allowed)[:4]}")
assert all(b"celsius".startswith(t) or b"fahrenheit".startswith(t) for t in allowed)
print("tokens to close the call:", machine.min_tokens())
