"""Auto mode constrains the calls models actually write (DESIGN invariant 3): every declared opener,
split however the tokenizer splits it, enters tool mode at its committing byte; prose stays free;
call-like text that does not become a call is counted."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from benchmarks.paper.walks import random_walk
from tooldec.decoding import Compiler, Grammar, Machine, Mode
from tooldec.decoding.positions import Open, Text
from tooldec.dialects import Dialect, Hermes, Llama3Json, Mistral, ReAct
from tooldec.tokens import Vocabulary
from tooldec.tools import ToolSet

from .conftest import brute_force
from .tools_zoo import ZOO

ARGS = {"city": "Paris", "days": 3}
PRETTY = json.dumps({"name": "get_weather", "arguments": ARGS}, indent=2)
COMPACT = json.dumps({"name": "get_weather", "arguments": ARGS})
OPENAI = {"type": "function", "function": {"name": "get_weather", "parameters": ARGS}}

# (dialect, answer, where the call is committed: the text up to and including the committing byte)
CASES = [
    (Hermes(), f"Sure.\n<tool_call>\n{COMPACT}\n</tool_call>", "Sure.\n<tool_call>"),
    (Hermes(), f"I will look it up.\n```json\n{PRETTY}\n```", 'I will look it up.\n```json\n{\n  "name": "'),
    (Hermes(), f"```tool_call\n{COMPACT}\n```", '```tool_call\n{"name": "'),
    (Hermes(), f"{COMPACT}", '{"name": "'),
    (Hermes(), f"Checking.\n  {PRETTY}", 'Checking.\n  {\n  "name": "'),
    (Hermes(), f"```python\ndef f():\n    return {COMPACT}\n```", '```python\ndef f():\n    return {"name": "'),
    (Hermes(), f"Result: {COMPACT} done", 'Result: {"name": "'),
    (Hermes(), "Ok " + json.dumps(OPENAI), 'Ok {"type": "function", "function": {"name": "'),
    (Hermes(), "Here:\n```json\n" + json.dumps(OPENAI, indent=4) + "\n```",
     'Here:\n```json\n{\n    "type": "function",\n    "function": {\n        "name": "'),
    (Llama3Json(), json.dumps({"name": "get_weather", "parameters": ARGS}), '{"name": "'),
    (Llama3Json(), "Ok " + json.dumps({"type": "function", "name": "get_weather", "parameters": ARGS}),
     'Ok {"type": "function", "name": "'),
    (Mistral(), "[" + COMPACT + "]", '[{"name": "'),
]


def opens_at(vocab: Vocabulary, dialect: Dialect, text: str, split: int) -> Machine:
    """A machine fed ``text[:split]`` and ``text[split:]`` as two runs of real tokens."""
    grammar = Grammar(ToolSet(ZOO), vocab, dialect)
    machine = Machine(grammar)
    for part in (text[:split], text[split:]):
        for tid in vocab.longest_match(part.encode()):
            assert machine.advance(tid), (text[:split], part, vocab.token_bytes[tid], machine.advanced.position)
    return machine


@pytest.mark.parametrize(("dialect", "answer", "commit"), CASES, ids=[f"{d.name}-{i}" for i, (d, _, _) in enumerate(CASES)])
def test_every_split_of_an_opener_enters_tool_mode(any_vocab: Vocabulary, dialect: Dialect, answer: str, commit: str) -> None:
    start = commit.rfind("\n", 0, max(len(commit) - 12, 0)) + 1
    for split in range(start, len(commit) + 1):
        machine = opens_at(any_vocab, dialect, answer, split)
        assert machine.advanced.calls_completed == 1 and machine.advanced.mode is Mode.TEXT, (split, machine.advanced.position)
        calls = dialect.parse_calls(answer)
        assert [(c.name, dict(c.arguments)) for c in calls] == [("get_weather", ARGS)]


HERMES = [c for c in CASES if isinstance(c[0], Hermes)]


@pytest.mark.parametrize(("dialect", "answer", "commit"), HERMES, ids=[f"hermes-{i}" for i in range(len(HERMES))])
def test_after_the_committing_byte_the_mask_is_exact(smollm2_vocab: Vocabulary, dialect: Dialect, answer: str,
                                                      commit: str) -> None:
    grammar = Grammar(ToolSet(ZOO), smollm2_vocab, dialect)
    machine = Machine(grammar)
    for tid in smollm2_vocab.longest_match(commit.encode()):
        assert machine.advance(tid)
    assert machine.advanced.mode is Mode.TOOL, machine.advanced.position
    assert np.array_equal(machine.allowed_token_ids(), brute_force(machine))  # e.g. only "\n" after <tool_call>
    name_at = answer.index('"name": "') + len('"name": "')  # the rest of the head, up to the name
    for tid in smollm2_vocab.longest_match(answer[len(commit):name_at].encode()):
        assert machine.advance(tid)
    expected = brute_force(machine)
    assert np.array_equal(machine.allowed_token_ids(), expected)
    names = {smollm2_vocab.token_bytes[i] for i in expected}
    assert b"get" in names or b"get_" in names, sorted(names)[:20]
    assert not any(b and b[:1] in (b" ", b"\n") for b in names)  # a name, nothing else


PROSE = [
    "Here is code:\n```python\nprint({'name': 1})\n```\nDone.",
    "I {love} braces, and {\"a\": 1} in a sentence.",
    "```json\n{\"city\": \"Paris\", \"name\": \"x\"}\n```",
    "My name is Bob; the name \"get_weather\" is a tool.",
    "def f():\n    return {\"city\": \"Paris\", \"days\": 3}\n",
    "{\"type\": \"function\", \"description\": \"d\"} and {\"type\": \"function\", \"function\": {\"x\": 1}}",
    "```js\nconst tool = {type: \"function\", name: \"get_weather\"};\n```",
    "- item\n- [link](http://x)\n",
]


@pytest.mark.parametrize("text", PROSE)
def test_prose_stays_free(smollm2_vocab: Vocabulary, text: str) -> None:
    machine = Machine(Grammar(ToolSet(ZOO), smollm2_vocab, Hermes()))
    for tid in smollm2_vocab.longest_match(text.encode()):
        assert machine.advance(tid), (text, smollm2_vocab.token_bytes[tid])
    assert machine.advanced.mode is Mode.TEXT and machine.advanced.calls_completed == 0


def test_without_inline_a_name_object_in_a_sentence_is_prose(smollm2_vocab: Vocabulary) -> None:
    dialect = Hermes(openers=["tag", "fenced", "bare"])
    text = f"Result: {COMPACT} inline is prose, not a line start."
    machine = Machine(Grammar(ToolSet(ZOO), smollm2_vocab, dialect))
    for tid in smollm2_vocab.longest_match(text.encode()):
        assert machine.advance(tid)
    assert machine.advanced.mode is Mode.TEXT and machine.advanced.calls_completed == 0
    assert (len(dialect.scan(text).calls), len(dialect.scan(text).broken)) == (0, 1)  # still counted


def test_openers_can_be_narrowed_to_the_tag(smollm2_vocab: Vocabulary) -> None:
    machine = Machine(Grammar(ToolSet(ZOO), smollm2_vocab, Hermes(openers=["tag"])))
    for tid in smollm2_vocab.longest_match(COMPACT.encode()):
        assert machine.advance(tid)
    assert machine.advanced.mode is Mode.TEXT and machine.advanced.calls_completed == 0


@pytest.mark.parametrize("tool_choice", ["required", "get_weather"])
def test_a_forced_call_opens_with_the_tag_unless_told(smollm2_vocab: Vocabulary, tool_choice: str) -> None:
    """Required and named calls open with ``<tool_call>`` by default (``Hermes.default_forced``);
    ``forced=`` widens it; auto mode and the calls after a forced one keep every opener."""
    tag, fenced = b"<tool_call>", b'```json\n{"name": "'
    grammar = Grammar(ToolSet(ZOO), smollm2_vocab, Hermes())

    def opens(machine: Machine, data: bytes) -> bool:
        return all(machine.advance(t) for t in smollm2_vocab.longest_match(data))

    assert opens(Machine(grammar, tool_choice=tool_choice), tag)
    assert not opens(Machine(grammar, tool_choice=tool_choice), fenced)
    first = Machine(grammar, tool_choice=tool_choice)
    assert all(smollm2_vocab.token_bytes[t] is not None and tag.startswith(smollm2_vocab.token_bytes[t])
               for t in first.allowed_token_ids().tolist())
    assert opens(Machine(grammar), fenced)
    assert opens(Machine(Grammar(ToolSet(ZOO), smollm2_vocab, Hermes(forced=["tag", "fenced"])), tool_choice=tool_choice),
                 fenced)
    after = Machine(grammar, tool_choice="required")
    assert opens(after, tag + f"\n{COMPACT}\n</tool_call>\n".encode() + fenced)  # a second call, fenced
    assert after.advanced.calls_completed == 1 and after.advanced.mode is Mode.TOOL


def test_a_forced_call_takes_a_special_tag_by_id(mistral_vocab: Vocabulary) -> None:
    """A forced opener that is a special token (Mistral's ``[TOOL_CALLS]``) is the first token alone."""
    tools = ToolSet([{"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}])
    every = Machine(Grammar(tools, mistral_vocab, Mistral()), tool_choice="required")
    tag = Machine(Grammar(tools, mistral_vocab, Mistral(forced=["tag"])), tool_choice="required")
    assert tag.allowed_token_ids().tolist() == [mistral_vocab.special_id("[TOOL_CALLS]")]
    assert every.allowed_token_ids().size > 1  # the list opener as well
    assert tag.min_tokens() >= every.min_tokens()


def test_forced_openers_must_be_in_use() -> None:
    with pytest.raises(ValueError, match="not in use"):
        Hermes(openers=["tag", "bare"], forced=["fenced"])
    with pytest.raises(ValueError, match="unknown opener"):
        Hermes(openers=["tagged"])
    assert [o.name for o in Hermes(openers=["fenced", "bare"]).forced_openers()] == ["fenced", "bare"]  # no tag: every one in use
    assert "forced" in repr(Hermes(forced=["tag", "bare"])) and "forced" not in repr(Hermes())


COUNTS = [
    (f"<tool_call>\n{COMPACT}\n</tool_call>", 1, 0),
    (f"```json\n{PRETTY}\n```", 1, 0),
    (f"{COMPACT}\nand {COMPACT} inline", 2, 0),
    (f"```python\ndef f():\n    return {COMPACT}\n```", 1, 0),
    ("```json\n" + json.dumps(OPENAI, indent=2) + "\n```", 1, 0),
    ("Call " + json.dumps(OPENAI) + " now.", 1, 0),
    ('```json\n{"type": "function", "function": {"name": "f", "description": "no arguments"}}\n```', 0, 1),
    ('```json\n{"type": "function", "function": {"name": "search.find.2022.2022', 0, 1),  # truncated, once
    ('return {"name": "f", "arguments": {"x": 1, // a comment\n}}', 0, 1),
    ('<tool_call>\n{"name": "get_weather", "arguments": {"city": ', 0, 1),  # truncated
    ('```json\n{"name": "answer_string", "description": "x"}\n```', 0, 1),  # no arguments
    ("Sure, here you go: the weather is fine.", 0, 0),
    (f"First <tool_call>\n{COMPACT}\n</tool_call> then ```json\n{{\"name\": 5}}\n```", 1, 1),
]


@pytest.mark.parametrize(("text", "calls", "broken"), COUNTS)
def test_call_like_text_is_counted(text: str, calls: int, broken: int) -> None:
    scan = Hermes().scan(text)
    assert (len(scan.calls), len(scan.broken)) == (calls, broken), scan


@pytest.mark.parametrize("commit", [c for _, _, c in HERMES[5:]], ids=["code", "sentence", "openai", "fenced_openai"])
def test_a_call_opened_anywhere_closes_within_its_minimum_budget(smollm2_vocab: Vocabulary, commit: str) -> None:
    """From the committing byte, random walks given exactly ``min_tokens`` close the call (the
    outer brace and the fence included), and the whole text parses as one valid call."""
    tools = ToolSet(ZOO)
    machine = Machine(Grammar(tools, smollm2_vocab, Hermes()))
    for tid in smollm2_vocab.longest_match(commit.encode()):
        assert machine.advance(tid)
    assert machine.advanced.mode is Mode.TOOL
    need = machine.min_tokens()
    rng = random.Random(commit)
    for _ in range(4):
        result = random_walk(machine.fork(), rng, need)
        assert result.closed and len(result.tokens) <= need, result.text
        calls = Hermes().parse_calls(commit + result.text)
        assert len(calls) == 1 and not tools[calls[0].name].validate_arguments(calls[0].arguments), result.text
        if "```json" in commit:
            assert result.text.rstrip().endswith("```"), result.text


@pytest.mark.parametrize("dialect", [Hermes(), Mistral(), Llama3Json()], ids=lambda d: type(d).__name__)
def test_open_masks_a_compiler_shares_are_each_tool_lists_own(qwen_vocab: Vocabulary, dialect: Dialect) -> None:
    """The masks of a call that must come first are cached once per compiler where the tool names
    do not decide them: each of two lists in turn, on one compiler, gets what a fresh compiler
    gives it, at every state of the openers (reached by the same bytes in both: a lazy automaton
    numbers its states in the order it meets them)."""
    lists = [ToolSet(ZOO[:1]), ToolSet(ZOO[1:2])]
    assert lists[0].names != lists[1].names
    shared = Compiler(qwen_vocab, dialect)
    dfa = shared.openers.open
    paths, todo = {dfa.start: b""}, [dfa.start]
    while todo:
        state = todo.pop()
        row = dfa.row(state)
        for byte in np.flatnonzero(row >= 0).tolist():
            t = int(row[byte])
            if t not in paths and not dfa.arrays.exits[t]:
                paths[t] = paths[state] + bytes([byte])
                todo.append(t)
    by_names = 0
    for tools in lists:
        grammar, fresh = shared.compile(tools), Compiler(qwen_vocab, dialect).compile(tools)
        for state, path in sorted(paths.items()):
            there = fresh.openers.open.start
            for byte in path:
                there = fresh.openers.open.next(there, byte)
            want = fresh.mask(Open(there, None), True, False).ids.tolist()
            assert grammar.mask(Open(state, None), True, False).ids.tolist() == want, path
            by_names += shared.openers.open_names_matter(state)
    assert by_names > 0 or isinstance(dialect, Hermes)  # Mistral's and Llama 3's openers run into names


@pytest.mark.parametrize("dialect", [Hermes(), Mistral(), Llama3Json(), ReAct()], ids=lambda d: type(d).__name__)
def test_text_masks_a_compiler_shares_are_each_tool_lists_own(qwen_vocab: Vocabulary, dialect: Dialect) -> None:
    """Free text's masks are cached once per compiler where the tool names do not decide which
    opener-completing tokens they allow: each of two lists in turn, on one compiler, gets what a
    fresh compiler gives it, at the text states on the way into every opener of the cases above."""
    lists = [ToolSet(ZOO[:1]), ToolSet(ZOO[1:2])]
    texts = {commit for d, _, commit in CASES if type(d) is type(dialect)} | {"Sure.\n<tool_call>", '{"name": "', "Ok.\nAction: "}
    shared = Compiler(qwen_vocab, dialect)
    by_names = shared_hits = 0
    for tools in lists:
        grammar, fresh = shared.compile(tools), Compiler(qwen_vocab, dialect).compile(tools)
        for text in sorted(texts):
            here, there = shared.openers.search_start, fresh.openers.search_start
            for byte in text.encode():
                got = grammar.mask(Text(here), True, True).ids.tolist()
                assert got == fresh.mask(Text(there), True, True).ids.tolist(), (text, byte)
                names_matter = shared.openers.text_names_matter(here)
                by_names += bool(names_matter)
                shared_hits += tools is lists[1] and not names_matter
                here, there = shared.openers.search.next(here, byte), fresh.openers.search.next(there, byte)
                if shared.openers.search.arrays.exits[here]:
                    break
    assert shared_hits > 0  # the second list met states whose masks are kept per compiler (the first list made them)
    assert by_names > 0 or isinstance(dialect, Mistral)  # ReAct's ``Action:`` and bare JSON run into names
