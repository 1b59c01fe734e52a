"""Today's call formats (``tooldec.dialects.families``) in the engine, on real vocabularies.

Random walks sample uniformly among the allowed tokens; the format's own reader must read every
walk back as a call that validates against its tool's schema as written. Formats whose markers
a vocabulary lacks (GLM-4.5, Kimi K2, MiniMax-M2: no tokenizer package ships for them) run on
Qwen3's byte-level vocabulary with their special tokens added as specials.
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping
from typing import Any

import pytest

from benchmarks.paper.walks import check_walk, random_walk
from tooldec.decoding import Compiler, Grammar, Machine
from tooldec.dialects import GLM45, DeclaredDialect, Dialect, KimiK2, MiniMaxM2, Qwen3Coder, ToolCall, get_dialect
from tooldec.errors import TokenizerError, UnsupportedSchemaError
from tooldec.tokens import Vocabulary
from tooldec.tokens.markers import readable
from tooldec.tools import Tool, ToolSet

from .helpers import with_specials

WALKS = 15


TOOLS = [
    {"name": "get_weather", "description": "Current weather.", "parameters": {"type": "object", "properties": {
        "city": {"type": "string", "maxLength": 20}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
        "days": {"type": "integer", "minimum": 1, "maximum": 14}}, "required": ["city"]}},
    {"name": "search_docs", "description": "Search.", "parameters": {"type": "object", "properties": {
        "query": {"type": "string", "pattern": "^[a-z ]+$"}, "exact": {"type": "boolean"},
        "filters": {"type": "object", "properties": {"lang": {"type": "string"}, "year": {"type": "integer"}}},
        "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 3}}, "required": ["query", "exact"]}},
]


def grammar_for(dialect: Dialect, vocab: Vocabulary, tools: list[Any] = TOOLS) -> Grammar:
    return Compiler(with_specials(vocab, list(dialect.markers_in_use)), dialect).compile(tools)


FAMILIES = ["qwen3", "qwen3_coder", "glm45", "minimax_m2", "kimi_k2", "deepseek_v31", "mistral_tekken", "gpt_oss"]


@pytest.mark.parametrize("name", FAMILIES)
@pytest.mark.parametrize("choice", ["required", "auto"])
def test_random_walks_read_back_as_valid_calls(name: str, choice: str, qwen_vocab: Vocabulary) -> None:
    dialect = get_dialect(name)
    grammar = grammar_for(dialect, qwen_vocab)
    tools = ToolSet(TOOLS)
    rng = random.Random(f"family-walk-{name}-{choice}")
    closed = 0
    for _ in range(WALKS):
        machine = Machine(grammar, tool_choice=choice, parallel_tool_calls=False)
        result = random_walk(machine, rng, machine.min_tokens() + rng.randint(0, 80))
        if choice == "auto" and not result.closed:
            scan = dialect.scan(result.text, grammar.tools)  # free text: no call, nothing call-like
            assert not scan.calls and not scan.broken, result.text
            continue
        closed += 1
        assert check_walk(result, dialect, tools) is None, (check_walk(result, dialect, tools), result.text)
        for call in dialect.parse_calls(result.text, grammar.tools):
            assert not grammar.tools[call.name].validate_arguments(call.arguments)
    assert choice == "auto" or closed == WALKS


@pytest.mark.parametrize("name", FAMILIES)
def test_written_calls_round_trip_through_the_grammar(name: str, qwen_vocab: Vocabulary) -> None:
    """A call as the family's template writes it is one the mask allows, token by token, and
    reads back as the same call."""
    dialect = get_dialect(name)
    grammar = grammar_for(dialect, qwen_vocab)
    call = ToolCall("search_docs", {"query": "vector stores", "exact": False, "filters": {"lang": "en"},
                                    "tags": ["db", "search"]})
    text = dialect.format_call(call)
    machine = Machine(grammar, tool_choice="required")
    assert machine.accept_string(dialect.spelled(text)), text
    assert machine.calls_completed == 1
    (back,) = dialect.parse_calls(text, grammar.tools)
    assert (back.name, dict(back.arguments)) == (call.name, dict(call.arguments))


def test_xml_values_are_raw_strings_and_typed_literals(qwen_vocab: Vocabulary) -> None:
    dialect = Qwen3Coder()
    grammar = grammar_for(dialect, qwen_vocab)
    text = ("<tool_call>\n<function=get_weather>\n<parameter=city>\nSão Paulo <b>\n</parameter>\n"
            "<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>")
    machine = Machine(grammar, tool_choice="required")
    assert machine.accept_string(text.encode())
    (call,) = dialect.parse_calls(text, grammar.tools)
    assert dict(call.arguments) == {"city": "São Paulo <b>", "days": 3}
    refused = Machine(grammar, tool_choice="required")  # a value never holds what ends it, nor reads as null
    assert not refused.accept_string(b"<tool_call>\n<function=get_weather>\n<parameter=city>\na</parameter>")
    refused = Machine(grammar, tool_choice="required")
    assert refused.accept_string(b"<tool_call>\n<function=get_weather>\n<parameter=city>\nNULL\n</")  # NULL\n</b> ...
    assert not refused.accept_string(b"parameter>")


def test_xml_formats_refuse_what_they_cannot_read_back() -> None:
    several = Tool.from_dict({"name": "f", "parameters": {"type": "object", "properties": {
        "x": {"anyOf": [{"type": "string"}, {"type": "integer"}]}}}})
    with pytest.raises(UnsupportedSchemaError, match="/properties/x"):
        Qwen3Coder().check_tool(several)
    untyped = Tool.from_dict({"name": "g", "parameters": {"type": "object", "properties": {
        "n": {"enum": [1, 2]}}}})
    with pytest.raises(UnsupportedSchemaError, match="declare the type"):
        GLM45().check_tool(untyped)


def test_a_marker_written_in_pieces_is_text(qwen_vocab: Vocabulary) -> None:
    """GLM's ``<tool_call>`` is one token; the same text in ordinary pieces opens nothing."""
    dialect = GLM45(reasoning=None)
    vocab = with_specials(qwen_vocab, list(dialect.markers_in_use))
    grammar = Compiler(vocab, dialect).compile(TOOLS)
    pieces = Machine(grammar)
    for piece in (b"<", b"tool", b"_call", b">"):
        assert pieces.advance(vocab.longest_match(piece)[0])
    assert pieces.mode.value == "text"
    marker = Machine(grammar)
    assert marker.advance(vocab.special_id("<tool_call>"))  # type: ignore[arg-type]
    assert marker.mode.value == "tool"


def test_a_missing_marker_is_a_clear_error(qwen_vocab: Vocabulary) -> None:
    with pytest.raises(TokenizerError, match="<arg_key>"):
        Compiler(qwen_vocab, GLM45())


def test_readable_spells_markers_back(qwen_vocab: Vocabulary) -> None:
    dialect = KimiK2()
    grammar = grammar_for(dialect, qwen_vocab)
    machine = Machine(grammar, tool_choice="required")
    text = dialect.format_call(ToolCall("get_weather", {"city": "Oslo"}))
    assert machine.accept_string(dialect.spelled(text))
    assert readable(machine.text, dialect.markers_in_use).decode() == text
    assert text.startswith("<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0")


def test_declarations_keep_a_block_end_shorter_than_a_next_call() -> None:
    for cls in (MiniMaxM2, KimiK2):
        fmt = cls.format
        assert fmt.next_call is not None
        dialect = cls()
        assert len(dialect.spelled(fmt.block_end)) < len(dialect.spelled(fmt.next_call))
    with pytest.raises(ValueError, match="block end"):
        from tooldec.dialects.declared import CallFormat, JsonArguments

        class Bad(DeclaredDialect):
            format = CallFormat(name="bad", families="", opener="<c>", head="", after_name=(":",),
                                arguments=JsonArguments(), call_end="", next_call="<c>", block_end="</calls>")


def _kinds(arguments: Mapping[str, Any]) -> dict[str, str]:
    return {k: type(v).__name__ for k, v in arguments.items()}


def test_key_value_values_keep_their_types(qwen_vocab: Vocabulary) -> None:
    dialect = GLM45(reasoning=None)
    grammar = grammar_for(dialect, qwen_vocab)
    call = ToolCall("search_docs", {"query": "abc", "exact": True, "filters": {"year": 2024}, "tags": []})
    (back,) = dialect.parse_calls(dialect.format_call(call), grammar.tools)
    assert _kinds(back.arguments) == {"query": "str", "exact": "bool", "filters": "dict", "tags": "list"}
    assert json.dumps(dict(back.arguments), sort_keys=True) == json.dumps(dict(call.arguments), sort_keys=True)


@pytest.mark.parametrize(("name", "fixture"), [
    ("gpt_oss", "gptoss_vocab"),
    ("deepseek_v31", "deepseek_v3_vocab"),
    ("pythonic", "gemma3_vocab"),
    ("llama3_json", "llama3_1_vocab"),
    ("mistral_tekken", "tekken_vocab"),
])
def test_each_family_on_its_own_tokenizer(name: str, fixture: str, request: pytest.FixtureRequest) -> None:
    """On the family's real vocabulary (Tekken's shipped files predate ``[ARGS]``: it is added);
    the markers a vocabulary has are its own tokens, special or not (DeepSeek's are ordinary
    added tokens)."""
    vocab: Vocabulary = request.getfixturevalue(fixture)
    dialect = get_dialect(name, openers=["start", "call"]) if name == "pythonic" else get_dialect(name)
    grammar = grammar_for(dialect, vocab)
    added = grammar.vocab.size - vocab.size
    assert added == (1 if name == "mistral_tekken" else 0)
    tools = ToolSet(TOOLS)
    rng = random.Random(f"own-tokenizer-{name}")
    for _ in range(6):
        machine = Machine(grammar, tool_choice="required", parallel_tool_calls=False)
        result = random_walk(machine, rng, machine.min_tokens() + rng.randint(0, 60))
        assert check_walk(result, dialect, tools) is None, (check_walk(result, dialect, tools), result.text)
