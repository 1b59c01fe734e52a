"""The paper's stronger baselines: fuzzy tool-name matching and ToolkenGPT's backtrace.

Both only act after the model has written something wrong, which is the point of comparing them
with ToolDec (which never lets it write it). *Fuzzy matching* maps an unknown name to a known
one: a name that ends with it or that it ends with (``play`` -> ``spotify.play``), else the
closest by ``difflib``. *Backtrace* (ToolkenGPT, Hao et al. 2023): when a call fails, go back to
the token that started it and take the next most probable token there instead, then go on.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from tooldec.backends.generation import Generation, Generator, Request
from tooldec.dialects import Dialect, ToolCall
from tooldec.runtime import ToolDecoder
from tooldec.runtime.trace import CallRecord, Trace
from tooldec.tools import ToolSet

__all__ = ["BacktraceGenerator", "RepairDecoder", "closest_name", "first_failed_call", "repair_call"]

MAX_BACKTRACKS = 3
"""Retries per generation: each bans one more token at the failed call's start."""


def closest_name(name: str, names: Sequence[str]) -> str | None:
    """The known name an unknown ``name`` most likely meant, or ``None``.

    Examples:
        >>> closest_name("play", ["spotify.play", "spotify.pause"])
        'spotify.play'
        >>> closest_name("multiplication", ["add", "multiply"])
        'multiply'
        >>> closest_name("weather", ["add", "multiply"]) is None
        True
    """
    if name in names:
        return name
    lowered = name.lower()
    suffix = [n for n in names if n.lower().endswith(lowered) or lowered.endswith(n.lower())]
    if suffix:
        return min(suffix, key=lambda n: abs(len(n) - len(name)))
    close = difflib.get_close_matches(name, list(names), n=1, cutoff=0.6)
    return close[0] if close else None


def repair_call(call: ToolCall, tools: ToolSet, dialect: Dialect) -> ToolCall:
    """``call`` with its name fuzzily matched; positional formats re-read the arguments for the new name."""
    if call.name in tools:
        return call
    name = closest_name(call.name, tools.names)
    if name is None:
        return call
    moved = ToolCall(name, call.arguments, call.id)
    try:  # ToolkenGPT keys the values of an unknown tool "0", "1", ...: bind them to the new names
        reparsed = dialect.parse_calls(dialect.format_call(moved))
    except ValueError:
        return moved
    return ToolCall(name, reparsed[0].arguments, call.id) if len(reparsed) == 1 else moved


def _call_ok(call: ToolCall, tools: ToolSet) -> bool:
    return call.name in tools and not tools[call.name].validate_arguments(call.arguments)


def first_failed_call(text: str, dialect: Dialect, tools: ToolSet) -> int | None:
    """Where in ``text`` the first call that fails even after name repair starts, or ``None``.

    A call fails when the text from its trigger to the next does not parse, or parses to a call
    whose name cannot be repaired or whose arguments break the schema.

    Examples:
        >>> from tooldec.dialects import ToolkenGPT
        >>> from benchmarks.paper.datasets import funcqa_tools
        >>> tools = ToolSet(funcqa_tools())
        >>> first_failed_call("2+3=<add>(2, 3)=5, 5*7=<multiply>(5*7)=35", ToolkenGPT(tools), tools)
        23
        >>> first_failed_call("2*3=<multiplication>(2, 3)=6", ToolkenGPT(tools), tools) is None
        True
    """
    trigger = dialect.trigger
    if not trigger:
        return None
    starts = []
    at = text.find(trigger)
    while at >= 0:
        starts.append(at)
        at = text.find(trigger, at + len(trigger))
    for i, start in enumerate(starts):
        segment = text[start: starts[i + 1] if i + 1 < len(starts) else len(text)]
        calls = dialect.parse_calls(segment)
        if not calls or not all(_call_ok(repair_call(c, tools, dialect), tools) for c in calls):
            return start
    return None


class BacktraceGenerator(Generator):
    """Wraps a backend's generator: an unconstrained generation whose call fails is redone from the
    token that started the call, with that token banned there (greedy: the next most probable)."""

    def __init__(self, inner: Generator, tools: ToolSet, dialect: Dialect) -> None:
        self.inner = inner
        self.tools = tools
        self.dialect = dialect
        self.vocab = inner.vocab
        self.eos_ids = inner.eos_ids
        self.tokenizer = inner.tokenizer
        self.backtracks = 0
        """Backtracks made so far (all generations)."""

    def seed(self, seed: int) -> None:
        self.inner.seed(seed)

    def next_logits(self, ids: Sequence[int]) -> np.ndarray:
        return self.inner.next_logits(ids)

    def run(self, prompt_ids: Sequence[int], request: Request) -> Generation:
        """As the inner generator; retries with backtrace when unconstrained."""
        generation = self.inner.run(prompt_ids, request)
        if request.grammar is not None:
            return generation
        prefix, budget = request.prefix, request.max_new_tokens
        ids = list(generation.ids)
        banned: dict[int, set[int]] = {}
        for _ in range(MAX_BACKTRACKS):
            text = prefix + self._decode(ids)
            failed = first_failed_call(text, self.dialect, self.tools)
            if failed is None:
                break
            k = self._token_at(ids, failed - len(prefix))
            if k is None:
                break
            banned.setdefault(k, set()).add(ids[k])
            logits = self.inner.next_logits(list(prompt_ids) + ids[:k])
            logits[list(banned[k])] = -np.inf
            logits[self.vocab.size:] = -np.inf
            token = int(np.argmax(logits))
            self.backtracks += 1
            ids = ids[:k] + [token]
            if token in self.eos_ids or budget - len(ids) <= 0:
                generation = replace(generation, ids=ids, ended=token in self.eos_ids, call_closed=False)
                continue
            rest = self.inner.run(list(prompt_ids) + ids, replace(request, max_new_tokens=budget - len(ids),
                                                                  prefix=prefix + self._decode(ids)))
            ids = ids + list(rest.ids)
            generation = replace(rest, ids=ids)
        return generation

    def _decode(self, ids: Sequence[int]) -> str:
        kept = [t for t in ids if t not in self.eos_ids]
        return str(self.vocab.decode(kept).decode("utf-8", errors="replace"))

    def _token_at(self, ids: Sequence[int], char: int) -> int | None:
        """The index of the token whose text covers character ``char`` of the decoded output."""
        if char < 0:
            return None  # the call started in the forced prefix: nothing generated to take back
        for k in range(len(ids)):
            if len(self._decode(ids[: k + 1])) > char:
                return k
        return None


class RepairDecoder(ToolDecoder):
    """``ToolDecoder`` unconstrained, with fuzzy names before validation and backtrace on failure.

    Overrides the runtime's private ``_check_and_run`` (the runtime has no public hook for
    rewriting a parsed call yet).
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **{**kwargs, "constrained": False})
        self.generator = BacktraceGenerator(self.generator, self.tools, self.dialect)
        self.repaired = 0

    def _check_and_run(self, call: ToolCall, trace: Trace, calls_left: int) -> CallRecord:
        fixed = repair_call(call, self.tools, self.dialect)
        if fixed is not call:
            self.repaired += 1
        return super()._check_and_run(fixed, trace, calls_left)
