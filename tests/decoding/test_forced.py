"""The bytes the grammar forces (``Machine.advanced.forced_bytes``), on real vocabularies, against a byte
oracle: at every position of real calls, the span is exactly the run of positions where one byte
alone keeps the output valid and the output may not end, up to a closed call."""

from __future__ import annotations

from typing import Literal

import pytest

from tooldec.decoding import Grammar, Machine, Text
from tooldec.dialects import Hermes
from tooldec.tokens import Vocabulary
from tooldec.tools import Tool, ToolSet

UNIT = {"type": "string", "enum": ["celsius", "fahrenheit"]}
TOOLS = ToolSet([
    Tool.from_dict({"name": "get_weather", "description": "Weather.", "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}, "unit": UNIT},
        "required": ["city", "unit"]}}),
    Tool.from_dict({"name": "get_time", "description": "Time.", "parameters": {
        "type": "object", "properties": {"zone": {"type": "string"}}, "required": ["zone"]}}),
    Tool.from_dict({"name": "search_books", "description": "Books.", "parameters": {
        "type": "object", "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}},
        "required": ["query"]}}),
])
CALLS = [
    '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo", "unit": "fahrenheit"}}\n</tool_call>',
    'Sure. <tool_call>\n{"name": "search_books", "arguments": {"query": "fjords", "limit": 3}}\n</tool_call>',
    '<tool_call>\n{"name": "get_time", "arguments": {"zone": "CET"}}\n</tool_call>\nDone.',
]


def oracle(machine: Machine, limit: int = 256) -> bytes:
    """The forced bytes by trying every byte at every position (``accept_string``, then undone)."""
    out = bytearray()
    steps = 0
    while len(out) < limit and machine.advanced.mode.value == "tool" and not machine.advanced.is_accepting():
        fits = []
        for byte in range(256):
            if machine.accept_string(bytes((byte,))):
                machine.rollback()
                fits.append(byte)
                if len(fits) > 1:  # a choice
                    break
        if len(fits) != 1:
            break
        machine.accept_string(bytes(fits))
        steps += 1
        out += bytes(fits)
        if machine.advanced.call_just_closed:
            break
    if steps:
        machine.rollback(steps)
    return bytes(out)


@pytest.mark.parametrize("choice", ["required", "auto"])
def test_forced_bytes_match_the_byte_oracle_along_real_calls(any_vocab: Vocabulary,
                                                             choice: Literal["required", "auto"]) -> None:
    grammar = Grammar(TOOLS, any_vocab, Hermes())
    for call in CALLS if choice == "auto" else CALLS[:1] + CALLS[2:]:
        machine = Machine(grammar, tool_choice=choice)
        data = call.encode()
        for i in range(len(data) + 1):
            if not isinstance(machine.advanced.position, Text) or i == 0:
                assert machine.advanced.forced_bytes() == oracle(machine), (call, data[:i])
            if i < len(data):
                assert machine.accept_string(data[i:i + 1])


def test_what_a_call_forces(qwen_vocab: Vocabulary) -> None:
    """The framing after an opener, the rest of a unique name, required keys, an enum's rest."""
    machine = Machine(Grammar(TOOLS, qwen_vocab, Hermes()), tool_choice="required")
    assert machine.advanced.forced_bytes() == b'<tool_call>\n{"name": "'
    machine.accept_string(b'<tool_call>\n{"name": "get_')
    assert machine.advanced.forced_bytes() == b""  # get_time or get_weather
    machine.accept_string(b"w")
    assert machine.advanced.forced_bytes() == b'eather", "arguments": {"city": "'
    machine.accept_string(b'eather", "arguments": {"city": "Oslo')
    assert machine.advanced.forced_bytes() == b""  # the string may go on
    machine.accept_string(b'"')
    assert machine.advanced.forced_bytes() == b', "unit": "'  # required keys come in order
    machine.accept_string(b', "unit": "f')
    assert machine.advanced.forced_bytes() == b'ahrenheit"}}\n</tool_call>'
    assert machine.advanced.forced_bytes(5) == b"ahren"
    machine.accept_string(b'ahrenheit"}}\n</tool_call>')
    assert machine.advanced.calls_completed == 1 and machine.advanced.forced_bytes() == b""


def test_a_named_tool_forces_its_name(smollm2_vocab: Vocabulary) -> None:
    machine = Machine(Grammar(TOOLS, smollm2_vocab, Hermes()), tool_choice="get_time")
    assert machine.advanced.forced_bytes() == b'<tool_call>\n{"name": "get_time", "arguments": {"zone": "'
