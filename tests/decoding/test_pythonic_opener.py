"""The Pythonic ``call`` opener (docs/DESIGN.md, invariant 3): ``[`` + a real tool name + ``(`` after free text enters
tool mode at the ``(``, split however the tokenizer splits it; from there the mask is exact and the
call closes valid; prose with brackets stays free; call-like text that did not become a call is
counted."""

from __future__ import annotations

import random

import numpy as np
import pytest

from tooldec.decoding import Grammar, Machine, Mode, Tail
from tooldec.dialects import Pythonic
from tooldec.dialects.watch import OpenerWatch
from tooldec.tokens import Vocabulary
from tooldec.tools import ToolSet

from .conftest import brute_force
from .tools_zoo import ZOO

TOOLS = ToolSet([t for t in ZOO if t["name"] != "book_flight"])  # its ``from`` is no Python keyword argument
CALL = Pythonic(openers=["call"])
ANYWHERE = Pythonic(openers=["call", "inline_call"])
WEATHER = '[get_weather(city="Paris", days=3)]'

# (dialect, answer, the text up to and including the committing byte, the calls it holds)
CASES = [
    (CALL, f"Let me check.\n{WEATHER}", "Let me check.\n[get_weather(", ["get_weather"]),
    (CALL, WEATHER, "[get_weather(", ["get_weather"]),
    (CALL, f"Two calls:\n  {WEATHER[:-1]}, lookup()]", "Two calls:\n  [get_weather(", ["get_weather", "lookup"]),
    (CALL, "I looked it up: [x] done.\n[lookup()]", "I looked it up: [x] done.\n[lookup(", ["lookup"]),
    (ANYWHERE, f"Sure, I will call {WEATHER} now.", "Sure, I will call [get_weather(", ["get_weather"]),
]
IDS = ["after-a-line", "at-the-start", "indented-list-of-two", "after-prose-brackets", "mid-line"]


def walk(machine: Machine, rng: random.Random, budget: int) -> tuple[bool, str]:
    """Random allowed tokens within ``budget`` until the list of calls is closed (text again):
    ``(closed, text)``."""
    taken: list[int] = []
    while machine.advanced.mode is Mode.TOOL and len(taken) < budget:
        allowed = machine.allowed_token_ids(budget=budget - len(taken))
        assert allowed.size, machine.advanced.position
        taken.append(int(allowed[rng.randrange(allowed.size)]))
        assert machine.advance(taken[-1])
    return machine.advanced.mode is Mode.TEXT, machine.advanced.grammar.vocab.decode(taken).decode()


def feed(machine: Machine, vocab: Vocabulary, text: str) -> None:
    for tid in vocab.longest_match(text.encode()):
        assert machine.advance(tid), (text, vocab.token_bytes[tid], machine.advanced.position)


@pytest.mark.parametrize(("dialect", "answer", "commit", "names"), CASES, ids=IDS)
def test_every_split_of_the_opener_enters_tool_mode_at_the_parenthesis(
        any_vocab: Vocabulary, dialect: Pythonic, answer: str, commit: str, names: list[str]) -> None:
    grammar = Grammar(TOOLS, any_vocab, dialect)
    start = commit.rfind("\n") + 1
    for split in range(start, len(answer) + 1):
        machine = Machine(grammar)
        feed(machine, any_vocab, answer[:split])
        # tool mode exactly from the ``(`` that ends ``[name(`` to the ``]`` that closes the list
        inside = len(commit) <= split < len(answer) - (answer[::-1].index("]"))
        assert (machine.advanced.mode is Mode.TOOL) == inside, (split, answer[:split], machine.advanced.position)
        feed(machine, any_vocab, answer[split:])
        assert machine.advanced.calls_completed == len(names) and machine.advanced.mode is Mode.TEXT, (split, machine.advanced.position)
    calls = dialect.parse_calls(answer)
    assert [c.name for c in calls] == names
    assert not any(TOOLS[c.name].validate_arguments(c.arguments) for c in calls)
    assert dialect.scan(answer).broken == []


@pytest.mark.parametrize(("dialect", "answer", "commit", "names"), CASES[:3] + CASES[4:], ids=IDS[:3] + IDS[4:])
def test_around_the_committing_byte_the_mask_is_exact(smollm2_vocab: Vocabulary, dialect: Pythonic, answer: str,
                                                       commit: str, names: list[str]) -> None:
    """Before the ``(`` (free text: only tokens that complete ``[name(`` into a bad call are
    masked), right after it, and after the first argument name: the mask is the brute force."""
    machine = Machine(Grammar(TOOLS, smollm2_vocab, dialect))
    feed(machine, smollm2_vocab, commit[:-1])
    assert machine.advanced.mode is Mode.TEXT
    expected = brute_force(machine)
    assert np.array_equal(machine.allowed_token_ids(), expected)
    allowed = {smollm2_vocab.token_bytes[i] for i in expected}
    assert b"(" in allowed and b'("' not in allowed and b"()" not in allowed  # get_weather needs a city
    feed(machine, smollm2_vocab, "(")
    assert machine.advanced.mode is Mode.TOOL
    expected = brute_force(machine)
    assert np.array_equal(machine.allowed_token_ids(), expected)
    firsts = {smollm2_vocab.token_bytes[i] for i in expected}
    assert b"city" in firsts and not any(b[:1] in (b'"', b" ", b"1") for b in firsts if b), sorted(firsts)[:20]
    feed(machine, smollm2_vocab, 'city="Paris", ')
    assert np.array_equal(machine.allowed_token_ids(), brute_force(machine))


@pytest.mark.parametrize(("dialect", "answer", "commit", "names"), CASES, ids=IDS)
def test_a_committed_call_closes_valid_within_its_minimum_budget(smollm2_vocab: Vocabulary, dialect: Pythonic,
                                                                  answer: str, commit: str, names: list[str]) -> None:
    machine = Machine(Grammar(TOOLS, smollm2_vocab, dialect))
    feed(machine, smollm2_vocab, commit)
    position = machine.advanced.position
    assert machine.advanced.mode is Mode.TOOL and isinstance(position, Tail) and position.tool == names[0]
    need = machine.min_tokens()
    rng = random.Random(commit)
    for _ in range(6):
        closed, text = walk(machine.fork(), rng, need + rng.randint(0, 20) * (rng.random() < 0.5))
        assert closed, text
        calls = dialect.parse_calls(commit + text)
        assert calls and calls[0].name == names[0], commit + text
        assert not any(TOOLS[c.name].validate_arguments(c.arguments) for c in calls), commit + text
        assert dialect.scan(commit + text).broken == []


PROSE = [
    "[1] Smith et al. say so.",
    "- [link](http://x)\n- [see here](http://y)",
    "[ ] to do\n[x] done",
    "xs = [f(x) for x in range(3)]\n[print(x) for x in xs]",  # code: f and print are no tools
    "[get_weather] is a tool; [get_weather is a tool]\n[add] [lookup ](x) [Get_weather(x)]",
    "[set_alarm.later(a)]\n[get_weather_now(x)]\n[add_two(1)]",  # longer names than a tool's, not its own
    "Arrays: [[1, 2], [3]] and [(1, 2)] and []",
]


@pytest.mark.parametrize("dialect", [CALL, ANYWHERE], ids=["call", "anywhere"])
@pytest.mark.parametrize("text", PROSE)
def test_prose_with_brackets_stays_free(smollm2_vocab: Vocabulary, dialect: Pythonic, text: str) -> None:
    machine = Machine(Grammar(TOOLS, smollm2_vocab, dialect))
    feed(machine, smollm2_vocab, text)
    assert machine.advanced.mode is Mode.TEXT and machine.advanced.calls_completed == 0


def test_mid_line_is_free_unless_inline_call_is_asked_for(smollm2_vocab: Vocabulary) -> None:
    text = "Then foo([add(1, 2)]) in code."
    feed(Machine(Grammar(TOOLS, smollm2_vocab, CALL)), smollm2_vocab, text)  # free: mid-line
    machine = Machine(Grammar(TOOLS, smollm2_vocab, ANYWHERE))
    feed(machine, smollm2_vocab, "Then foo([add(")
    assert machine.advanced.mode is Mode.TOOL
    assert not machine.accept_string("1")  # a real tool after ``[``: keywords only, as a required call


def test_a_positional_call_to_a_real_tool_at_a_line_start_is_constrained(smollm2_vocab: Vocabulary) -> None:
    machine = Machine(Grammar(TOOLS, smollm2_vocab, CALL))
    feed(machine, smollm2_vocab, "Result:\n[add(")
    assert machine.advanced.mode is Mode.TOOL and not machine.accept_string("1, 2)]")
    assert machine.accept_string("numbers=[1, 2])]") and machine.advanced.calls_completed == 1


def test_the_opener_follows_the_inventory(smollm2_vocab: Vocabulary) -> None:
    grammar = Grammar(TOOLS, smollm2_vocab, CALL)
    machine = Machine(grammar)
    feed(machine, smollm2_vocab, "Ok.\n[lookup(")
    assert machine.advanced.mode is Mode.TOOL
    smaller = grammar.with_tools(remove=["lookup"])
    machine = Machine(smaller)
    feed(machine, smollm2_vocab, "Ok.\n[lookup(x)]")  # no longer a tool: prose
    assert machine.advanced.mode is Mode.TEXT and machine.advanced.calls_completed == 0
    dotted = grammar.with_tools(add=[{"name": "math.factorial", "parameters": {
        "type": "object", "properties": {"number": {"type": "integer"}}, "required": ["number"]}}])
    machine = Machine(dotted)
    feed(machine, smollm2_vocab, "Ok.\n[math.factorial(")
    assert machine.advanced.mode is Mode.TOOL and machine.accept_string("number=5)]") and machine.advanced.calls_completed == 1


def test_one_call_per_turn_closes_the_opener_after_the_first(smollm2_vocab: Vocabulary) -> None:
    machine = Machine(Grammar(TOOLS, smollm2_vocab, CALL), parallel_tool_calls=False)
    feed(machine, smollm2_vocab, "Ok.\n[lookup()]\n[lookup")
    assert not machine.accept_string("(")  # a second call may not open
    assert machine.accept_string("] is done") and machine.advanced.calls_completed == 1


def test_auto_mode_needs_an_opener_that_may_follow_text(smollm2_vocab: Vocabulary) -> None:
    with pytest.raises(ValueError, match=r"openers=\['call'\]"):
        Machine(Grammar(TOOLS, smollm2_vocab, Pythonic()))  # the default: ``start`` alone
    assert Pythonic().options() == {} and [o.name for o in Pythonic().openers()] == ["start"]
    machine = Machine(Grammar(TOOLS, smollm2_vocab, Pythonic(openers=["start", "call"])))
    assert machine.accept_string("[") and machine.advanced.mode is Mode.TOOL  # ``start`` commits at once


def test_a_required_call_may_open_with_the_call_opener(smollm2_vocab: Vocabulary) -> None:
    grammar = Grammar(TOOLS, smollm2_vocab, CALL)
    rng = random.Random(1)
    for choice in ("required", "set_alarm"):
        machine = Machine(grammar, tool_choice=choice)
        assert np.array_equal(machine.allowed_token_ids(), brute_force(machine))
        assert machine.accept_string("[")
        expected = brute_force(machine)  # a named tool: only the way to its name stays open
        assert np.array_equal(machine.allowed_token_ids(), expected)
        assert (b"a" in {smollm2_vocab.token_bytes[i] for i in expected}) == (choice == "required")
        machine.rollback()
        closed, text = walk(machine, rng, machine.min_tokens() + 10)
        calls = CALL.parse_calls(text)
        assert closed and calls and not TOOLS[calls[0].name].validate_arguments(calls[0].arguments), text
        assert choice == "required" or calls[0].name == choice


COUNTS = [
    (CALL, f"Sure.\n{WEATHER}", 1, 0),
    (CALL, 'Sure.\n[get_weather(city="Par', 0, 1),  # cut off
    (CALL, 'Sure.\n[get_weather("Paris")]', 0, 1),  # positional: not a call
    (CALL, "[f(x) for x in xs]", 0, 0),  # a comprehension is code
    (CALL, "See [the docs](http://x) and [1].", 0, 0),
    (CALL, 'I call [get_weather(city="Par', 0, 0),  # mid-line: not an opener of ``call``
    (ANYWHERE, 'I call [get_weather(city="Par', 0, 1),
    (CALL, '[a(x=1), b(y=2)]\n[c(', 2, 1),
    (CALL, '[f(x={"name": "a"})]', 1, 0),  # an object inside a call is part of it
    (CALL, '{"name": "f", "arguments": {}}', 0, 1),
    (Pythonic(), "[unknown_tool(a=1)]", 1, 0),  # parsed: the tool check counts it as unknown
]


@pytest.mark.parametrize(("dialect", "text", "calls", "broken"), COUNTS)
def test_call_like_text_is_counted(dialect: Pythonic, text: str, calls: int, broken: int) -> None:
    scan = dialect.scan(text)
    assert (len(scan.calls), len(scan.broken)) == (calls, broken), scan


def test_the_watch_holds_back_what_may_become_a_call() -> None:
    watch = OpenerWatch(CALL, names=TOOLS.names)
    watch.feed(b"See [x] and\n[get_wea")
    assert (watch.held, watch.call_start) == (8, None)
    watch.feed(b"ther(")
    assert watch.call_start == len(b"See [x] and\n")
    other = OpenerWatch(CALL, names=TOOLS.names)
    other.feed(b"See\n[print(x)]")
    assert (other.held, other.call_start) == (0, None)
    unnamed = OpenerWatch(CALL)  # no names: any identifier counts, never less than the engine holds
    unnamed.feed(b"See\n[print(")
    assert unnamed.call_start == len(b"See\n")


def test_copies_of_a_snapshot_share_its_opener_tables(smollm2_vocab: Vocabulary) -> None:
    """``Grammar(...)`` copies the cached snapshot: masks are cached by its serial, so the copies
    must read one automaton (its state numbers), built once, however many copies ask first."""
    first, second = Grammar(TOOLS, smollm2_vocab, CALL), Grammar(TOOLS, smollm2_vocab, CALL)
    assert first.serial == second.serial and second.openers is first.openers
    assert first.openers is not first.compiler.openers  # per snapshot: built from its names
    assert Grammar(TOOLS, smollm2_vocab, Pythonic()).openers is Grammar(TOOLS, smollm2_vocab, Pythonic()).compiler.openers
