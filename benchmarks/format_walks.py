"""Whole random outputs of a call format, for the reference checks: ``benchmarks/formats.py`` and
``tests/serving/test_vllm_formats.py`` read each text back with tooldec and with a parser not
written here.

:func:`format_walk` walks a whole output (reasoning, text, one call or several, the end), now and
then among the tokens that spell the format's own pieces (:func:`salient_tokens`), which uniform
sampling over a large vocabulary would almost never write.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np

from tooldec.decoding import Grammar, Machine, Mode
from tooldec.dialects.base import Dialect, ToolCall
from tooldec.tokens import Vocabulary
from tooldec.tokens.markers import readable

__all__ = ["MARKER_STEP", "PIECE_STEP", "FormatWalk", "format_walk", "salient_tokens", "single_tokens", "with_specials"]

MARKER_STEP, PIECE_STEP = 0.05, 0.20
"""How often a :func:`format_walk` step picks among the format's markers (end of sequence
included), and among the tokens that spell a piece of a written call, instead of the whole mask."""


def single_tokens(dialect: Dialect) -> list[str]:
    """The texts the family writes as one token each: its markers, and its tag openers that are
    no spelling of markers (Hermes' ``<tool_call>``, Llama's ``<|python_tag|>``)."""
    markers = dialect.markers_in_use
    tags = [o.tag for o in dialect.openers() if o.tag and not any(m in o.tag for m in markers)]
    return list(dict.fromkeys([*markers, *tags]))


def with_specials(vocab: Vocabulary, texts: list[str]) -> Vocabulary:
    """``vocab`` with those of ``texts`` it has no single token for added as special tokens after
    its last id, as a model family that writes them has them: a format whose tokenizer no package
    ships (GLM-4.5, Kimi K2, MiniMax-M2) runs on another byte-level vocabulary this way."""
    ordinary = {data for data in vocab.token_bytes if data is not None}
    missing = [t for t in texts if vocab.special_id(t) is None and t.encode() not in ordinary]
    if not missing:
        return vocab
    special = {**vocab.special, **{vocab.size + i: t for i, t in enumerate(missing)}}
    return Vocabulary(vocab.token_bytes + (None,) * len(missing), special, vocab.eos_ids, vocab.kind,
                      vocab.name + "+specials")


@dataclass(frozen=True)
class FormatWalk:
    """One output of :func:`format_walk`: its tokens and text (markers as their text, no end of
    sequence: what a server returns), and how it was made."""

    tokens: list[int]
    text: str
    choice: str
    reasoned: bool
    """The output opened a reasoning section (the model chose to, or the prompt did)."""
    max_reasoning: int | None
    calls_completed: int
    most_reasoning: int
    """Most tokens the reasoning section held at any point."""
    finished: bool
    """It ended at an end of sequence or where the turn is over, not cut at the budget."""


def salient_tokens(grammar: Grammar, sample: ToolCall) -> tuple[np.ndarray, np.ndarray]:
    """The format's markers (and end of sequence), and the tokens whose bytes are a piece of
    ``sample`` written out, of the reasoning delimiters or of a refused text."""
    dialect, vocab = grammar.dialect, grammar.vocab
    texts = [dialect.format_call(sample)]
    if dialect.reasoning is not None:
        texts += [dialect.reasoning.open, dialect.reasoning.close]
    texts += [r.tag for r in dialect.refusals() if r.tag]
    spelled = [dialect.spelled(t) for t in texts]
    markers = ({i for i, data in enumerate(vocab.token_bytes) if data and data[:1] == b"\xff"} | set(vocab.eos_ids)
               | {i for i, t in vocab.special.items() if any(t in text for text in texts)})
    pieces = [i for i, data in enumerate(vocab.token_bytes) if data and any(data in s for s in spelled)]
    return np.array(sorted(markers), dtype=np.int64), np.array(pieces, dtype=np.int64)


def format_walk(grammar: Grammar, rng: random.Random, choice: str, salient: tuple[np.ndarray, np.ndarray],
                extra: int = 60) -> FormatWalk:
    """A whole random output: one call or (half the time) up to three, the reasoning section
    opened half the time (with a random ``max_reasoning_tokens`` or none), a budget of the
    shortest completion plus up to ``extra`` tokens; it ends at an end of sequence, where the
    engine says the turn is over, or at the budget.

    Raises:
        AssertionError: The mask was empty, or allowed a token that ``advance`` refused.
    """
    dialect, vocab = grammar.dialect, grammar.vocab
    parallel = rng.random() < 0.5
    reasoning = dialect.reasoning
    reasoned = reasoning is not None and (reasoning.inside_at_start or rng.random() < 0.5)
    max_reasoning = rng.choice([None, rng.randint(0, 30)]) if reasoned else None
    machine = Machine(grammar, tool_choice=choice, parallel_tool_calls=parallel, max_calls=3 if parallel else None,
                      max_reasoning_tokens=max_reasoning)
    taken: list[int] = []
    if reasoned and reasoning is not None and not reasoning.inside_at_start:  # the model chose to reason
        for tid in vocab.longest_match(dialect.spelled(reasoning.open)):
            if not machine.advance(tid):
                raise AssertionError(f"{dialect.name}: the reasoning open was refused")
            taken.append(tid)
    budget = len(taken) + machine.min_tokens() + rng.randint(0, extra)
    most = 0
    markers, pieces = salient
    while len(taken) < budget and not machine.is_done() and not machine.advanced.turn_over:
        allowed = machine.allowed_token_ids(budget=budget - len(taken))
        if not allowed.size:
            raise AssertionError(f"{dialect.name}: empty mask at {machine.advanced.position}")
        draw = rng.random()
        among = markers if draw < MARKER_STEP else pieces if draw < MARKER_STEP + PIECE_STEP else None
        if among is not None:
            narrowed = allowed[np.isin(allowed, among)]
            allowed = narrowed if narrowed.size else allowed
        tid = int(allowed[rng.randrange(allowed.size)])
        if not machine.advance(tid):
            raise AssertionError(f"{dialect.name}: the mask allowed {tid} but advance refused it at {machine.advanced.position}")
        taken.append(tid)
        if machine.advanced.mode is Mode.REASONING:
            most = max(most, machine.advanced.reasoning_tokens)
    kept = [t for t in taken if t not in vocab.eos_ids]  # a server strips the end of sequence
    text = readable(vocab.decode(kept), dialect.markers_in_use).decode("utf-8", errors="replace")
    finished = machine.is_done() or machine.advanced.turn_over
    return FormatWalk(taken, text, choice, reasoned, max_reasoning, machine.advanced.calls_completed, most, finished)
