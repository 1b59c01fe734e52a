"""Choosing a tool by its whole name: a beam over the name trie, scored by the model.

Greedy decoding under the name trie commits to a tool by its first token: for "Where was 964
Subamara discovered?" a model that starts with ``sub`` (for Subamara) ends in ``subsidiaries``,
though it would give ``discoverer_or_inventor`` more probability as a whole. :class:`NameSelector`
keeps the ``width`` most probable partial names (summed log-probabilities of their tokens) until
the best *complete* name (its last token crosses into the call's next bytes, so ``add`` and
``add_numbers`` are told apart) beats every partial one left.

Examples:
    >>> from tooldec.decoding import Grammar
    >>> from tooldec.dialects import ToolkenGPT
    >>> from tooldec.tokens import Vocabulary
    >>> from tooldec.tools import ToolSet, Tool
    >>> vocab = Vocabulary.from_tokens([bytes([b]) for b in range(256)] + [b"<eos>"], special={256: "<eos>"},
    ...                                eos_ids=[256])
    >>> tools = ToolSet([Tool.from_dict({"name": n, "parameters": {"type": "object", "properties": {}}})
    ...                  for n in ("sub", "subsidiaries", "discoverer")])
    >>> grammar = Grammar(tools, vocab, ToolkenGPT(tools))
    >>> names_of(grammar)[0] == {b"sub", b"subsidiaries", b"discoverer"}
    True
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ..backends.generation import Generation, Generator, Request
from ..backends.step import Stepper
from ..decoding import Grammar, Machine
from ..decoding.machine import Mode
from ..decoding.positions import Name, Tail

__all__ = ["NameSelector", "Selection", "names_of"]


def names_of(grammar: Grammar) -> tuple[frozenset[bytes], frozenset[bytes]]:
    """The tool names of ``grammar`` as bytes, and every prefix of them (the empty one included)."""
    names = frozenset(name.encode() for name in grammar.names)
    prefixes = frozenset(n[:i] for n in names for i in range(len(n) + 1))
    return names, prefixes


@dataclass(frozen=True)
class Selection:
    """One name choice: the name, its log-probability, the runners-up, and what it cost."""

    name: str
    logprob: float
    candidates: tuple[tuple[str, float], ...]
    evaluations: int
    seconds: float


@dataclass
class _Hyp:
    score: float
    tokens: list[int]
    machine: Machine
    tail: bytes = field(default=b"")


class NameSelector(Generator):
    """A generator that chooses each tool name by the model's probability of the whole name, text
    and arguments as ``generator`` would. A ``width`` (>= 1) of at least the number of tools makes
    the search exhaustive over names (each scored by its most probable tokenization)."""

    def __init__(self, generator: Generator, *, width: int = 5) -> None:
        if width < 1:
            raise ValueError(f"width must be >= 1, got {width}")
        self.generator = generator
        self.width = width
        self.vocab = generator.vocab
        self.eos_ids = generator.eos_ids
        self.model = getattr(generator, "model", None)
        self.tokenizer = getattr(generator, "tokenizer", None)
        self.selections: list[Selection] = []  # every name chosen (the experiments read and clear it)
        self._names: dict[int, tuple[Grammar, frozenset[bytes], frozenset[bytes]]] = {}

    def seed(self, seed: int) -> None:
        self.generator.seed(seed)

    def next_logits(self, ids: Sequence[int]) -> np.ndarray:
        return np.asarray(self.generator.next_logits(ids))

    def _model_ids(self, ids: Sequence[int]) -> list[int]:
        convert = getattr(self.generator, "model_ids", None)
        return list(convert(ids)) if convert is not None else list(ids)

    def _trie(self, grammar: Grammar) -> tuple[frozenset[bytes], frozenset[bytes]]:
        entry = self._names.get(id(grammar))
        if entry is None or entry[0] is not grammar:
            if len(self._names) >= 16:  # bounded: one entry per grammar in use
                self._names.clear()
            entry = (grammar, *names_of(grammar))
            self._names[id(grammar)] = entry
        return entry[1], entry[2]

    def run(self, prompt_ids: Sequence[int], request: Request) -> Generation:
        """Generate as the wrapped generator does, each name chosen with the beam; with a grammar,
        text and arguments are greedy (without one, the wrapped generator runs alone)."""
        machine = request.machine()
        if machine is None:
            return self.generator.run(prompt_ids, request)
        max_new_tokens, stop_after_call = request.max_new_tokens, request.stop_after_call
        stepper = Stepper(machine, self.vocab.size)
        stops: tuple[bytes, ...] = tuple(getattr(self.generator, "stop", ()))  # the wrapped generator's stop strings
        prompt = list(prompt_ids)
        ids: list[int] = []
        eos = set(self.eos_ids)
        chosen = False
        ended = closed = False
        while len(ids) < max_new_tokens:
            budget = max_new_tokens - len(ids)
            if machine.advanced.mode is Mode.TOOL and not chosen:
                tokens, machine = self.choose(prompt + ids, machine, budget)
                stepper.machine = machine
                ids.extend(tokens)
                chosen = True
                token = tokens[-1]
            else:
                token = stepper.step(self.next_logits(self._model_ids(prompt + ids)), budget)
                ids.append(token)
            if token in eos:
                ended = True
                break
            if machine.advanced.call_just_closed:
                chosen = False
            if machine.is_done() or (stop_after_call is not None and machine.advanced.call_just_closed):
                closed = machine.advanced.call_just_closed
                break
            if machine.advanced.mode is Mode.TEXT:
                chosen = False
                if stops and any(stop in machine.advanced.text for stop in stops):
                    ended = True
                    break
        return Generation(self._model_ids(ids), ended, closed, stepper.masking_seconds, stepper.steps, 0.0,
                          stepper.checked, stepper.refusals)

    def choose(self, context: Sequence[int], machine: Machine, budget: int) -> tuple[list[int], Machine]:
        """Write the rest of the call's opener greedily, then the best whole name: the tokens (the
        last may run past the name) and a fork of ``machine`` after them; ``context``: the ids
        before ``machine``'s position. The choice goes to :attr:`selections`."""
        names, prefixes = self._trie(machine.advanced.grammar)
        machine = machine.fork()
        tokens: list[int] = []
        while len(tokens) < budget and not _at_name(machine):  # the opener, never running into the name
            allowed = machine.allowed_token_ids(budget - len(tokens))
            if not allowed.size:
                break
            logits = self.next_logits(self._model_ids([*context, *tokens]))
            ranked = allowed[np.argsort(-logits[allowed], kind="stable")].tolist()
            for token in ranked:  # the most probable token that stops at the name's start at the latest
                twin = machine.fork()
                if twin.advance(token) and not _into_name(twin):
                    break
            else:
                token = ranked[0]
            machine.advance(token)
            tokens.append(token)
        chosen, machine = self._select([*context, *tokens], machine, budget - len(tokens), names, prefixes)
        return tokens + chosen, machine

    def _select(self, context: Sequence[int], machine: Machine, budget: int, names: frozenset[bytes],
                prefixes: frozenset[bytes]) -> tuple[list[int], Machine]:
        """The tokens of the most probable complete name (its last token may run past it)."""
        start_time = time.perf_counter()
        base = len(machine.advanced.text)
        beam = [_Hyp(0.0, [], machine)]
        done: list[_Hyp] = []
        evaluations = 0
        while beam:
            found: dict[bytes, _Hyp] = {}
            for hyp in beam:
                logits = self.next_logits(self._model_ids([*context, *hyp.tokens])).astype(np.float64)
                evaluations += 1
                top = logits.max()
                logp = logits - (top + np.log(np.exp(logits - top).sum()))
                allowed = hyp.machine.allowed_token_ids(budget - len(hyp.tokens))
                if not allowed.size:
                    continue
                best = allowed[np.argsort(-logp[allowed], kind="stable")[: self.width]]
                for token in best.tolist():
                    twin = hyp.machine.fork()
                    if not twin.advance(token):
                        continue
                    written = twin.advanced.text[base:]
                    score = hyp.score + float(logp[token])
                    if written not in found or found[written].score < score:
                        found[written] = _Hyp(score, [*hyp.tokens, token], twin, written)
            complete = [h for h in found.values() if h.tail not in prefixes]
            done.extend(complete)
            partial = sorted((h for h in found.values() if h.tail in prefixes), key=lambda h: -h.score)
            beam = partial[: self.width]
            if done:
                best_done = max(h.score for h in done)
                beam = [h for h in beam if h.score > best_done]  # log-probabilities only fall
        if not done:  # no name could be completed within the budget: should not happen
            raise RuntimeError("no tool name could be completed")
        done.sort(key=lambda h: -h.score)
        winner = done[0]
        labelled: list[tuple[str, float]] = []
        for hyp in done:  # one entry per name: its best tokenization
            name = _name(hyp.tail, names)
            if all(name != other for other, _ in labelled):
                labelled.append((name, hyp.score))
        self.selections.append(Selection(labelled[0][0], winner.score, tuple(labelled[:5]), evaluations,
                                         time.perf_counter() - start_time))
        return winner.tokens, winner.machine


def _at_name(machine: Machine) -> bool:
    """Whether ``machine`` is at the start of a tool name (the opener and head written)."""
    position = machine.advanced.position
    return isinstance(position, Name) and not position.prefix


def _into_name(machine: Machine) -> bool:
    """Whether ``machine`` has written part of a name, or run past one."""
    position = machine.advanced.position
    return isinstance(position, Tail) or (isinstance(position, Name) and bool(position.prefix))


def _name(tail: bytes, names: frozenset[bytes]) -> str:
    """The longest tool name that ``tail`` (a name and the bytes after it) starts with."""
    best = max((n for n in names if tail.startswith(n)), key=len, default=tail)
    return best.decode("utf-8", errors="replace")
