"""Random walks through the grammar: the property test behind "every call is valid".

A walk samples uniformly among the allowed tokens, under a token budget, until the first call
closes. Used by the tests (a few hundred walks) and by ``benchmarks/walks.py`` (many more).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from tooldec.decoding import Machine
from tooldec.dialects.base import Dialect
from tooldec.tokens.markers import readable
from tooldec.tools import ToolSet

__all__ = ["WalkResult", "random_walk", "check_walk"]


@dataclass(frozen=True)
class WalkResult:
    tokens: list[int]
    text: str
    closed: bool


def random_walk(machine: Machine, rng: random.Random, budget: int) -> WalkResult:
    """Uniformly random allowed tokens until a call closes or ``budget`` tokens are spent."""
    taken: list[int] = []
    while machine.advanced.calls_completed == 0 and len(taken) < budget:
        allowed = machine.allowed_token_ids(budget=budget - len(taken))
        if not allowed.size:
            raise AssertionError(f"empty mask at {machine.advanced.position}")
        tid = int(allowed[rng.randrange(allowed.size)])
        if not machine.advance(tid):
            raise AssertionError(f"the mask allowed {tid} but advance refused it at {machine.advanced.position}")
        taken.append(tid)
    grammar = machine.advanced.grammar
    text = readable(grammar.vocab.decode(taken), grammar.dialect.markers_in_use).decode("utf-8", errors="replace")
    return WalkResult(taken, text, machine.advanced.calls_completed > 0)


def check_walk(result: WalkResult, dialect: Dialect, tools: ToolSet) -> str | None:
    """Why the walk's call is not a valid call of ``tools``, or ``None`` if it is."""
    if not result.closed:
        return "the call did not close within the budget"
    calls = dialect.parse_calls(result.text, {tool.name: tool for tool in tools})
    if len(calls) != 1:
        return f"expected one call, parsed {len(calls)} from {result.text!r}"
    call = calls[0]
    if call.name not in tools:
        return f"unknown tool {call.name!r}"
    errors = tools[call.name].validate_arguments(call.arguments)
    return f"invalid arguments for {call.name}: {errors[0]}" if errors else None
