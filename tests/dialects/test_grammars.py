"""Accept/reject tables: the bytes after trigger and head (the name, then the tail) for real tools.

BFCL tools used: ``get_prime_factors(number: int, formatted: bool)``,
``biology.get_cell_info(cell_type: str, detailed: bool = ...)``,
``get_protein_sequence(gene: str, species: str = ...)``,
``calculate_triangle_area(base: int, height: int, unit: str = ...)``,
``math.hypot(x: int, y: int, z: int = ...)``; FuncQA: ``power(a, b)`` and
``add(numbers: [number, ...] with at least 2)``.
"""

from __future__ import annotations

import pytest

from tooldec.automata.dfa import SINK
from tooldec.dialects import NEXT_CALL, Dialect, Llama3Json, Mistral, Pythonic, ReAct, ToolkenGPT
from tooldec.tools import Tool

from .helpers import call_dfa

Row = tuple[str, str, bool]

TOOLKENGPT: list[Row] = [
    ("power", "power>(2, 8)=", True),
    ("power", "power>(2,8)=", True),  # FuncQA's multi-tool prompt writes no space
    ("power", "power>(-2.5, 1e3)=", True),
    ("power", "power>(2)=", False),  # wrong arity
    ("power", "power>(2, 8, 1)=", False),
    ("power", "power>(2, 8)", False),  # missing close
    ("power", "power>(2, 8=", False),
    ("power", "power>(2,  8)=", False),
    ("power", "power>(2, x)=", False),
    ("power", "power>(02, 8)=", False),  # not JSON
    ("power", "power>(a=2, b=8)=", False),
    ("add", "add>(277, 209, 72)=", True),
    ("add", "add>(311, 112)=", True),
    ("add", "add>()=", False),  # minItems 1
    ("add", "add>(1)=", True),  # one operand, as FuncQA writes <multiply>(x) once
    ("add", "add>()=", False),
    ("math.hypot", "math.hypot>(3, 4)=", True),
    ("math.hypot", "math.hypot>(3, 4, 5)=", True),  # trailing optional z
    ("math.hypot", "math.hypot>(3)=", False),  # y is required
    ("math.hypot", "math.hypot>(3.5, 4)=", False),  # integers only
    ("math.hypot", "math.hypot>(3, 4, 5, 6)=", False),
]

REACT: list[Row] = [
    ("get_prime_factors", 'get_prime_factors\nAction Input: {"number": 12, "formatted": true}\n', True),
    ("get_prime_factors", 'get_prime_factors\nAction Input: {"number": 12, "formatted": true}', False),
    ("get_prime_factors", 'get_prime_factors\nAction Input: {"number": 12}\n', False),  # missing required
    ("get_prime_factors", 'get_prime_factors\nAction Input: {"number": 12, "formatted": true, "x": 1}\n', False),
    ("get_prime_factors", 'get_prime_factors\nAction Input: {"number": "12", "formatted": true}\n', False),
    ("get_prime_factors", 'get_prime_factors\nAction Input: {"number":12,"formatted":true}\n', False),
    ("get_prime_factors", 'get_prime_factors\nAction Input: {"formatted": true, "number": 12}\n', False),
    ("get_prime_factors", 'get_prime_factors\nAction Input: {"number": 12, "formatted": True}\n', False),
    ("get_prime_factors", 'get_prime_factors\nAction Input: {\n  "number": 12,\n  "formatted": true\n}\n', False),
    ("get_prime_factors", 'get_prime_factors\nAction: {"number": 12, "formatted": true}\n', False),
]

LLAMA3: list[Row] = [
    ("calculate_triangle_area", 'calculate_triangle_area", "parameters": {"base": 10, "height": 5}}', True),
    ("calculate_triangle_area", 'calculate_triangle_area", "parameters": {"base": 10, "height": 5, "unit": "cm"}}', True),
    ("calculate_triangle_area", 'calculate_triangle_area", "parameters": {"base": 10}}', False),
    ("calculate_triangle_area", 'calculate_triangle_area", "arguments": {"base": 10, "height": 5}}', False),
    ("calculate_triangle_area", 'calculate_triangle_area", "parameters": {"base": 10, "height": 5}', False),
    ("calculate_triangle_area", 'calculate_triangle_area", "parameters": {"base": 10, "height": 5, "color": "red"}}', False),
    ("calculate_triangle_area", 'calculate_triangle_area", "parameters": {"base": 10, "height": 5,}}', False),
    ("calculate_triangle_area", 'calculate_triangle_area", "parameters": {"base": 1.5, "height": 5}}', False),
]

MISTRAL: list[Row] = [
    ("get_protein_sequence", 'get_protein_sequence", "arguments": {"gene": "BRCA1"}}]', True),
    ("get_protein_sequence", 'get_protein_sequence", "arguments": {"gene": "BRCA1", "species": "mouse"}}]', True),
    ("get_protein_sequence", 'get_protein_sequence", "arguments": {"gene": "BRCA1"}, "id": "a1B2c3D4e"}]', True),
    ("get_protein_sequence", 'get_protein_sequence", "arguments": {"gene": "BRCA1"}, "id": "abc"}]', False),
    ("get_protein_sequence", 'get_protein_sequence", "arguments": {"gene": "BRCA1"}}', False),
    ("get_protein_sequence", 'get_protein_sequence", "arguments": {"gene": "BRCA1"}}, {"name": "', False),
    ("get_protein_sequence", 'get_protein_sequence", "arguments": {"gene": "BRCA1", "species": 5}}]', False),
    ("get_protein_sequence", 'get_protein_sequence", "arguments": {"species": "mouse", "gene": "BRCA1"}}]', False),
    ("get_protein_sequence", 'get_protein_sequence", "arguments": {}}]', False),
    ("get_protein_sequence", 'get_protein_sequence", "parameters": {"gene": "BRCA1"}}]', False),
]

PYTHONIC: list[Row] = [
    ("get_prime_factors", "get_prime_factors(number=12, formatted=True)]", True),
    ("get_prime_factors", "get_prime_factors(number=-12, formatted=False)]", True),
    ("get_prime_factors", "get_prime_factors(number=12, formatted=true)]", False),  # JSON literal
    ("get_prime_factors", "get_prime_factors(number=12)]", False),
    ("get_prime_factors", "get_prime_factors(formatted=True, number=12)]", False),
    ("get_prime_factors", "get_prime_factors(number=12, formatted=True, x=1)]", False),
    ("get_prime_factors", "get_prime_factors(number=12, formatted=True)", False),
    ("get_prime_factors", "get_prime_factors(12, True)]", False),
    ("get_prime_factors", "get_prime_factors(number = 12, formatted = True)]", False),
    ("biology.get_cell_info", 'biology.get_cell_info(cell_type="neuron")]', True),
    ("biology.get_cell_info", 'biology.get_cell_info(cell_type="neuron", detailed=None)]', False),
    ("biology.get_cell_info", "biology.get_cell_info(cell_type='neuron')]", False),
    ("biology.get_cell_info", "biology.get_cell_info()]", False),
]

TABLE: list[tuple[type[Dialect], str, str, bool]] = [
    *((ToolkenGPT, *row) for row in TOOLKENGPT),
    *((ReAct, *row) for row in REACT),
    *((Llama3Json, *row) for row in LLAMA3),
    *((Mistral, *row) for row in MISTRAL),
    *((Pythonic, *row) for row in PYTHONIC),
]


@pytest.fixture(scope="module")
def tools(bfcl_tools: dict[str, Tool], funcqa: dict[str, Tool]) -> dict[str, Tool]:
    return {**bfcl_tools, **funcqa}


@pytest.mark.parametrize(("cls", "tool", "text", "accepted"), TABLE)
def test_call_grammar(cls: type[Dialect], tool: str, text: str, accepted: bool, tools: dict[str, Tool]) -> None:
    dfa = call_dfa(cls(), tools[tool])
    assert dfa.accepts(text.encode()) is accepted


@pytest.mark.parametrize(
    ("cls", "tool", "text"),
    [
        (Mistral, "get_protein_sequence", 'get_protein_sequence", "arguments": {"gene": "BRCA1"}}, {"name": "'),
        (Mistral, "get_protein_sequence", 'get_protein_sequence", "arguments": {"gene": "a"}, "id": "123456789"}, {"name": "'),
        (Pythonic, "get_prime_factors", "get_prime_factors(number=12, formatted=True), "),
    ],
)
def test_next_call_branch_is_marked(cls: type[Dialect], tool: str, text: str, tools: dict[str, Tool]) -> None:
    """With ``next_call`` the grammar reaches the ``NEXT_CALL`` mark where the next name begins."""
    dfa = call_dfa(cls(), tools[tool], next_call=True)
    state, _ = dfa.walk(text.encode())
    assert state != SINK and dfa.marks.get(state) == NEXT_CALL and dfa.arrays.accepting[state]
    closed = text[: text.rindex("}") + 1] + "]" if cls is Mistral else text[:-2] + "]"
    assert dfa.accepts(closed.encode())  # the list may also close there


def test_bounds_are_kept_in_positional_numbers() -> None:
    tool = Tool.from_dict({"name": "choose", "parameters": {"type": "object", "properties": {
        "n": {"type": "integer", "minimum": 0}, "k": {"type": "integer", "minimum": 0, "maximum": 10}},
        "required": ["n", "k"]}})
    dfa = call_dfa(ToolkenGPT(), tool)
    assert dfa.accepts(b"choose>(8, 7)=")
    assert not dfa.accepts(b"choose>(-8, 7)=")
    assert not dfa.accepts(b"choose>(8, 11)=")
    assert not dfa.accepts(b"choose>(8, 7.0)=")
