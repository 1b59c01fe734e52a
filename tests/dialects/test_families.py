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
from tooldec.dialects import (
    GLM45,
    DeclaredDialect,
    DeepSeekV31,
    Dialect,
    KimiK2,
    MiniMaxM2,
    Mistral,
    Qwen3,
    Qwen3Coder,
    ToolCall,
    get_dialect,
)
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
    assert machine.advanced.calls_completed == 1
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


def test_a_marker_written_in_pieces_opens_nothing_and_is_refused(qwen_vocab: Vocabulary) -> None:
    """GLM's ``<tool_call>`` is one token; the same text in ordinary pieces opens nothing, and
    free text refuses its last piece: vLLM's parser (and ``scan``) read text, and would take it
    for an opener."""
    dialect = GLM45(reasoning=None)
    vocab = with_specials(qwen_vocab, list(dialect.markers_in_use))
    grammar = Compiler(vocab, dialect).compile(TOOLS)
    pieces = Machine(grammar)
    for piece in (b"<", b"tool", b"_call"):
        assert pieces.advance(vocab.longest_match(piece)[0])
    assert pieces.advanced.mode.value == "text"
    assert not pieces.advance(vocab.longest_match(b">")[0])
    assert pieces.advance(vocab.longest_match(b"s")[0]) and pieces.advance(vocab.longest_match(b">")[0])
    assert pieces.advanced.mode.value == "text"  # <tool_calls> is other text
    marker = Machine(grammar)
    (single,) = vocab.longest_match(b"<tool_call>")  # Qwen3's own added token
    assert marker.advance(single)
    assert marker.advanced.mode.value == "tool"


def test_a_missing_marker_is_a_clear_error(qwen_vocab: Vocabulary) -> None:
    with pytest.raises(TokenizerError, match="<arg_key>"):
        Compiler(qwen_vocab, GLM45())


def test_readable_spells_markers_back(qwen_vocab: Vocabulary) -> None:
    dialect = KimiK2()
    grammar = grammar_for(dialect, qwen_vocab)
    machine = Machine(grammar, tool_choice="required")
    text = dialect.format_call(ToolCall("get_weather", {"city": "Oslo"}))
    assert machine.accept_string(dialect.spelled(text))
    assert readable(machine.advanced.text, dialect.markers_in_use).decode() == text
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


def test_deepseek_arguments_hold_no_raw_newline(qwen_vocab: Vocabulary) -> None:
    """vLLM's ``deepseek_v31`` parser reads a call with a regex whose ``.`` stops at a newline: JSON
    whitespace there would hide the call from it (``benchmarks/formats.py``)."""
    dialect = DeepSeekV31()
    grammar = grammar_for(dialect, qwen_vocab)
    head = dialect.spelled("<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>")
    assert not Machine(grammar, tool_choice="required").accept_string(head + b'{\n"city": "Oslo"}')
    written = dialect.format_call(ToolCall("get_weather", {"city": "Oslo", "days": 2}))
    assert Machine(grammar, tool_choice="required").accept_string(dialect.spelled(written))
    assert '{"city": "Oslo", "days": 2}' in written


STOPS = {"glm45": ["</think>"], "minimax_m2": ["</invoke>", '<parameter name="', "</think>"], "kimi_k2": [],
         "deepseek_v31": [], "mistral_tekken": []}
"""Texts besides the markers at which vLLM's parser for the format ends a value."""


@pytest.mark.parametrize("name", list(STOPS))
def test_no_value_holds_a_marker_text(name: str, qwen_vocab: Vocabulary) -> None:
    """vLLM's parsers read text: a string value holding the text that ends a call (``</tool_call>``,
    ``<|tool_call_end|>``, ``[TOOL_CALLS]``...) or a reasoning delimiter would end the call there."""
    dialect = get_dialect(name)
    grammar = grammar_for(dialect, qwen_vocab)
    for stop in [*dialect.markers_in_use, *STOPS[name]]:
        written = dialect.format_call(ToolCall("get_weather", {"city": "aQQQb"}))
        before, after = written.split("QQQ")
        machine = Machine(grammar, tool_choice="required")
        spelled = dialect.spelled(before) + stop.encode() + dialect.spelled(after)
        assert not machine.accept_string(spelled), (name, stop)
    assert Machine(grammar, tool_choice="required").accept_string(dialect.spelled(written.replace("QQQ", "<b>")))


def test_qwen3_coder_free_text_refuses_a_bare_function_tag(qwen_vocab: Vocabulary) -> None:
    """vLLM's ``qwen3_coder`` parser opens a call at ``<function=`` even without ``<tool_call>``."""
    grammar = grammar_for(Qwen3Coder(), qwen_vocab)
    assert not Machine(grammar).accept_string(b"See <function=get_weather>")
    assert Machine(grammar).accept_string(b"See <functions>")


def test_hermes_and_mistral_values_hold_no_call_end(qwen_vocab: Vocabulary, mistral_vocab: Vocabulary) -> None:
    """vLLM's hermes parser ends a call at the first ``</tool_call>`` (and its qwen3 reasoning
    parser drops ``</think>``), its mistral parser splits the output at ``[TOOL_CALLS]``: no string
    value holds them."""
    cases = [(Qwen3(openers=["tag"]), qwen_vocab, "</tool_call>"), (Qwen3(openers=["tag"]), qwen_vocab, "</think>"),
             (Mistral(openers=["tag"]), mistral_vocab, "[TOOL_CALLS]")]
    def takes(grammar: Grammar, text: str) -> bool:
        machine = Machine(grammar, tool_choice="required")
        tag = grammar.dialect.trigger or ""
        special = grammar.vocab.special_id(tag)  # Mistral's [TOOL_CALLS] is a control token
        if special is not None and text.startswith(tag):
            assert machine.advance(special)
            text = text[len(tag):]
        return machine.accept_string(text.encode())

    for dialect, vocab, stop in cases:
        grammar = Compiler(vocab, dialect).compile(TOOLS)
        written = dialect.format_call(ToolCall("get_weather", {"city": "aQQQb"}))
        assert not takes(grammar, written.replace("QQQ", stop)), stop
        assert takes(grammar, written.replace("QQQ", "<b>"))


def test_deepseek_free_text_refuses_a_call_begin(qwen_vocab: Vocabulary) -> None:
    """vLLM's ``deepseek_v31`` parser finds calls from ``<｜tool▁call▁begin｜>`` wherever it stands,
    outside a block of calls too: free text writes it neither as its token nor in pieces."""
    dialect = DeepSeekV31()
    grammar = grammar_for(dialect, qwen_vocab)
    assert not Machine(grammar).accept_string("See <｜tool▁call▁begin｜>".encode())
    assert not Machine(grammar).accept_string(b"See " + dialect.spelled("<｜tool▁call▁begin｜>"))
    assert Machine(grammar).accept_string("See <｜tool▁call｜>".encode())


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


def test_a_value_with_stop_texts_takes_any_escape(qwen_vocab: Vocabulary) -> None:
    """A reader finds a stop text as written: ``\\u00e3`` and ``\\u003c/tool_call>`` are escapes, no
    stop, so a string that refuses ``</tool_call>`` still takes every escape json.dumps writes."""
    note = {"name": "note", "description": "Keep a note.", "parameters": {"type": "object", "properties": {
        "text": {"type": "string"}}, "required": ["text"]}}
    grammar = Compiler(qwen_vocab, Qwen3(openers=["tag"])).compile([note])
    head = '<tool_call>\n{"name": "note", "arguments": {"text": "'
    for value, taken in [("S\\u00e3o", True), ("S\\u003c/tool_call>", True), ("\\ud83d\\ude00", True),
                         ("a</tool_call>", False), ("\\u00e3</tool_call>", False)]:
        assert Machine(grammar, tool_choice="required").accept_string((head + value).encode()) is taken, value
