"""Honest counting (docs/DESIGN.md, invariant 3): ``scan`` counts as a broken call every declared opener that appears
and does not become a parsed call, from the text the opener commits at, so the count agrees with
what auto mode constrains. A bare ``<tool_call>`` commits (the mask then writes the head), so a
tag followed by prose, by nothing or by an object that does not parse is one broken call; so are
``<|python_tag|>`` and ``[TOOL_CALLS]``, ``{"name"`` without its ``:``, and with Pythonic's
``start`` a first ``[`` that opens no list of calls."""

from __future__ import annotations

import json

import pytest

from tooldec.decoding import Grammar, Machine, Mode
from tooldec.dialects import Dialect, Hermes, Llama3Json, Mistral, Pythonic
from tooldec.tokens import Vocabulary
from tooldec.tools import ToolSet

TOOLS = ToolSet([
    {"name": "get_weather", "description": "Weather in a city.", "parameters": {
        "type": "object", "properties": {"city": {"type": "string", "maxLength": 20},
                                         "days": {"type": "integer", "minimum": 1, "maximum": 14}},
        "required": ["city"]}},
    {"name": "add", "description": "Add numbers.", "parameters": {
        "type": "object", "properties": {"numbers": {"type": "array", "items": {"type": "number"}, "maxItems": 8}},
        "required": ["numbers"]}},
])
ARGS = {"city": "Paris", "days": 3}
CALL = json.dumps({"name": "get_weather", "arguments": ARGS})
OPENAI = json.dumps({"type": "function", "function": {"name": "get_weather", "arguments": ARGS}})
LLAMA = json.dumps({"name": "get_weather", "parameters": ARGS})
WEATHER = '[get_weather(city="Paris", days=3)]'
START = Pythonic(openers=["start", "call"])

# (dialect, answer, calls parsed, broken calls)
COUNTS = [
    (Hermes(), f"<tool_call>\n{CALL}\n</tool_call>", 1, 0),  # tagged
    (Hermes(), "It returns a json object within <tool_call> XML tags.", 0, 1),  # bare tag, then prose
    (Hermes(), "Sure, calling it now: <tool_call>", 0, 1),  # bare tag, then nothing
    (Hermes(), '<tool_call>\n{"name": "get_weather", "arguments": {"city": ', 0, 1),  # truncated: once
    (Hermes(), f"<tool_call>\n{OPENAI}\n</tool_call>", 0, 1),  # not the tag's form: once, not also as openai
    (Hermes(), "<tool_call><tool_call>", 0, 2),
    (Hermes(), f"First <tool_call>\n{CALL}\n</tool_call> then <tool_call> in prose and {CALL}", 2, 1),  # mixed
    (Hermes(), "Close it with </tool_call>.", 0, 0),  # the closing tag opens nothing
    (Hermes(openers=["fenced", "bare", "inline"]), "within <tool_call> XML tags", 0, 0),  # tag not in use
    (Hermes(), 'fields = {"name", "age"}', 0, 1),  # {"name" commits, ``:`` or not
    (Hermes(), '{"name": "x", "description": "d", "items": {"name": "y", "arguments": {}}}', 0, 1),  # once
    (Llama3Json(), f"<|python_tag|>{LLAMA}", 1, 0),
    (Llama3Json(), '<|python_tag|>brave_search.call(query="Paris")', 0, 1),  # built-in tool code: no call here
    (Llama3Json(), "<|python_tag|>", 0, 1),
    (Llama3Json(), '<|python_tag|>{"name": "get_weather", "parameters": {"ci', 0, 1),
    (Llama3Json(), 'Ok {"type": "function", "name": "get_weather"}', 0, 1),
    (Mistral(), f"[TOOL_CALLS] [{CALL}]", 1, 0),
    (Mistral(), "[TOOL_CALLS] I cannot call a tool for that.", 0, 1),
    (Mistral(), "[TOOL_CALLS]", 0, 1),
    (Mistral(), '[TOOL_CALLS] [{"name": "get_weather", "arguments": {"ci', 0, 1),  # truncated: once
    (Mistral(), '[TOOL_CALLS] [{"name": "get_weather", "arguments": 5}]', 0, 1),  # once, not again as an object
    (Mistral(), f"[TOOL_CALLS] {CALL}", 1, 0),  # an object without its list: still read
    (Mistral(), f'[{CALL}, {{"name": 5}}]', 1, 1),  # a list item that is no call
    (START, WEATHER, 1, 0),
    (START, "[1] is the reference.", 0, 1),  # ``start`` commits at the first ``[``
    (START, "[f(x) for x in xs]", 0, 1),
    (Pythonic(openers=["call"]), "[f(x) for x in xs]", 0, 0),
    (START, 'Sure.\n[get_weather(city="Par', 0, 1),  # cut off: once
    (START, "See [1].", 0, 0),
]


@pytest.mark.parametrize(("dialect", "text", "calls", "broken"), COUNTS,
                         ids=[f"{d.name}-{i}" for i, (d, _, _, _) in enumerate(COUNTS)])
def test_hand_written_answers_are_counted(dialect: Dialect, text: str, calls: int, broken: int) -> None:
    scan = dialect.scan(text)
    assert (len(scan.calls), len(scan.broken)) == (calls, broken), scan


# (dialect, prose before, the opener's committing text, prose a model may write after it
# unconstrained, the rest of a call the mask allows instead)
COMMITS = [
    (Hermes(), "It goes within ", "<tool_call>", " XML tags.",
     '\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'),
    (Hermes(), "Here:\n```json\n", '{"name"', ", the tool.", ': "get_weather", "arguments": {"city": "Paris"}}\n```'),
    (Hermes(), "fields = ", '{"name"', ', "age"}', ': "add", "arguments": {"numbers": [1, 2]}}'),
    (Hermes(), "Ok ", '{"type": "function", "function": {"name"', "}}",
     ': "get_weather", "arguments": {"city": "Paris"}}}'),
    (Llama3Json(), "", "<|python_tag|>", "brave_search.call(query='x')",
     '{"name": "get_weather", "parameters": {"city": "Paris"}}'),
    (Llama3Json(), "Ok ", '{"type": "function", "name"', "}", ': "get_weather", "parameters": {"city": "Paris"}}'),
    (Mistral(), "", "[TOOL_CALLS]", " I cannot.", ' [{"name": "get_weather", "arguments": {"city": "Paris"}}]'),
    (Mistral(), "Calls:\n", '[{"name"', "}]", ': "get_weather", "arguments": {"city": "Paris"}}]'),
    (START, "", "[", "1] is the reference.", 'get_weather(city="Paris")]'),
]


def feed(machine: Machine, vocab: Vocabulary, text: str) -> None:
    """``text`` as real tokens; an opener that is a special token of ``vocab`` goes in by its id."""
    for special in ("<tool_call>", "<|python_tag|>", "[TOOL_CALLS]"):
        if text == special and vocab.special_id(special) is not None:
            assert machine.advance(vocab.special_id(special))  # type: ignore[arg-type]
            return
    for tid in vocab.longest_match(text.encode()):
        assert machine.advance(tid), (text, vocab.token_bytes[tid], machine.advanced.position)


@pytest.mark.parametrize(("dialect", "before", "commit", "after", "rest"), COMMITS,
                         ids=[f"{d.name}-{i}" for i, (d, *_) in enumerate(COMMITS)])
def test_what_the_mask_commits_to_is_what_scan_counts(any_vocab: Vocabulary, dialect: Dialect, before: str,
                                                      commit: str, after: str, rest: str) -> None:
    """On the four real vocabularies (the tags as text, or by id where they are special tokens):
    the opener's text puts the machine in tool mode, so the prose a free model writes after it is
    refused, and counted as one broken call; the call the mask lets it write is one call, none broken."""
    machine = Machine(Grammar(TOOLS, any_vocab, dialect))
    feed(machine, any_vocab, before)
    feed(machine, any_vocab, commit)
    assert machine.advanced.mode is Mode.TOOL, (commit, machine.advanced.position)
    first = any_vocab.longest_match(after.encode())[0]
    assert not machine.fork().advance(first), (commit, any_vocab.token_bytes[first])
    scan = dialect.scan(before + commit + after)
    assert (len(scan.calls), len(scan.broken)) == (0, 1), scan
    feed(machine, any_vocab, rest)
    assert machine.advanced.calls_completed == 1 and machine.advanced.mode is Mode.TEXT, machine.advanced.position
    scan = dialect.scan(before + commit + rest)
    assert (len(scan.calls), len(scan.broken)) == (1, 0), scan
    assert not TOOLS[scan.calls[0].name].validate_arguments(scan.calls[0].arguments)


def test_a_special_tag_spelled_in_pieces_stays_free_but_is_counted(mistral_vocab: Vocabulary) -> None:
    """Mistral's ``[TOOL_CALLS]`` is a control token: only its id commits. Spelled in ordinary pieces
    it is prose to the mask, and still a broken call to ``scan`` (a client gets no call from it)."""
    machine = Machine(Grammar(TOOLS, mistral_vocab, Mistral()))
    pieces = mistral_vocab.longest_match(b"[TOOL_CALLS] I cannot.")
    assert mistral_vocab.special_id("[TOOL_CALLS]") not in pieces
    for tid in pieces:
        assert machine.advance(tid)
    assert machine.advanced.mode is Mode.TEXT and machine.advanced.calls_completed == 0
    assert len(Mistral().scan("[TOOL_CALLS] I cannot.").broken) == 1
