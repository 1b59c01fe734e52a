"""Decoding with learned tokens on llama.cpp: ``<T>`` then the tool under the grammar, or toolkens.

At each step in text mode the learned rows are scored against the model's final hidden state
(llama.cpp's embeddings output, switched on only for those steps) and appended to the model's
logits, so a learned token competes with the vocabulary as one more token would. The learned
tokens are special ids past the model's own (``width``, ``width + 1``, ...) in an extended
:class:`~tooldec.tokens.Vocabulary`; a dialect whose ``trigger`` is ``"<T>"`` therefore enters
tool mode on it, and the grammar writes the call from there (name over *all* tools, then
arguments). The model never reads a learned token: it reads the token's expansion (nothing for
``<T>``; ``<add>(`` for a ToolkenGPT toolken, after which the model writes the arguments freely,
as ToolkenGPT does, until the call closes).

``generate`` has the signature of the other generators and returns only the ids the model read,
so the runtime's text and prompts stay plain; where learned tokens fired is in ``events``.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..backends.generation import Generation
from ..backends.llamacpp import pick_token
from ..decoding import Grammar, Machine, ToolChoice
from ..decoding.machine import Mode
from ..dialects.base import Dialect
from ..errors import ToolDecError
from ..tokens import Vocabulary
from .tokens import LearnedTokens

__all__ = ["Fired", "LearnedGenerator", "extended_vocabulary", "learned_decoder"]


@dataclass(frozen=True)
class Fired:
    """A learned token chosen at ``position`` (index into the generation's ids)."""

    position: int
    name: str


def extended_vocabulary(vocab: Vocabulary, names: Sequence[str]) -> Vocabulary:
    """``vocab`` with one special id per learned token after its last id.

    Examples:
        >>> base = Vocabulary.from_tokens(["a", "b"])
        >>> ext = extended_vocabulary(base, ["<T>"])
        >>> ext.size, ext.special_id("<T>")
        (3, 2)
    """
    special = dict(vocab.special)
    for i, name in enumerate(names):
        if vocab.special_id(name) is not None:
            raise ToolDecError(f"the vocabulary already has a special token {name!r}")
        special[vocab.size + i] = name
    return Vocabulary(vocab.token_bytes + (None,) * len(names), special, vocab.eos_ids, vocab.kind,
                      f"{vocab.name}+{len(names)} learned")


class LearnedGenerator:
    """A ``llama_cpp.Llama`` with learned output rows; the interface of ``LlamaCppGenerator``.

    Args:
        llm: The model (its context is created without embeddings; they are switched on per step).
        tokenizer: Its transformers tokenizer.
        vocab: The model's vocabulary padded to its logits (``tooldec.backends.load`` gives it).
        learned: The rows; checked against the model (hidden size, vocabulary).
        stop_after_learned: End the generation as soon as a learned token and its expansion are
            written (to read which toolken was chosen without its arguments).
        stop: Strings that end a generation in text mode (ends as the end-of-sequence token
            does): a raw few-shot prompt has no end of turn, and the model would go on with the
            next question.

    Raises:
        LearnedTokenError: Rows trained for another model.
    """

    def __init__(self, llm: Any, tokenizer: Any, vocab: Vocabulary, learned: LearnedTokens, *,
                 stop_after_learned: bool = False, stop: Sequence[str] = ()) -> None:
        import llama_cpp

        self.model = llm
        self.tokenizer = tokenizer
        self.learned = learned
        self.width = int(llm.n_vocab())
        if vocab.size != self.width:
            raise ToolDecError(f"the vocabulary has {vocab.size} ids but the model {self.width} logits: pad it")
        learned.check(int(llm.n_embd()), vocab.fingerprint)
        self.base_vocab = vocab
        self.vocab = extended_vocabulary(vocab, learned.names)
        eos = set(vocab.eos_ids)
        if llm.token_eos() >= 0:
            eos.add(int(llm.token_eos()))
        self.eos_ids = sorted(eos)
        self.expansions = [list(tokenizer.encode(text, add_special_tokens=False)) if text else []
                           for text in learned.expansions]
        self.stop_after_learned = stop_after_learned
        self.stop = tuple(text.encode() for text in stop)
        self.events: list[Fired] = []
        """Where learned tokens fired (position in its generation's ids), every ``generate`` since
        the list was last cleared."""
        self._rng = np.random.default_rng()
        self._lib = llama_cpp
        self._dim = int(llm.n_embd())

    def seed(self, seed: int) -> None:
        self._rng = np.random.default_rng(seed)

    # -- the model ----------------------------------------------------------------------------

    def model_ids(self, ids: Sequence[int]) -> list[int]:
        """``ids`` as the model reads them: each learned id replaced by its expansion."""
        out: list[int] = []
        for token in ids:
            out.extend(self.expansions[token - self.width] if token >= self.width else [token])
        return out

    def _switch(self, on: bool) -> None:
        """Embeddings output on or off (set every time: other generators may share the context)."""
        self._lib.llama_set_embeddings(self.model.ctx, on)

    def _eval(self, ids: Sequence[int], hidden: bool) -> None:
        """Evaluate ``ids``; the last one's hidden state is kept when ``hidden`` (only it is read)."""
        if len(ids) > 1:
            self._switch(False)
            self.model.eval(list(ids[:-1]))
        self._switch(hidden)
        self.model.eval(list(ids[-1:]))

    def _feed(self, ids: Sequence[int], hidden: bool) -> None:
        """Make the context hold exactly ``ids``, evaluating only what the cache does not hold."""
        llm = self.model
        if not ids:
            raise ValueError("the prompt is empty: give at least one token")
        if len(ids) >= llm.n_ctx():
            raise ToolDecError(f"the prompt has {len(ids)} tokens but the model's context holds {llm.n_ctx()}")
        held = llm.input_ids[: llm.n_tokens]
        limit = min(len(held), len(ids) - 1)
        same = 0
        if limit > 0:
            diff = np.flatnonzero(held[:limit] != np.asarray(ids[:limit], dtype=held.dtype))
            same = int(diff[0]) if diff.size else limit
        llm.n_tokens = same
        self._eval(ids[same:], hidden)

    def _scores(self, learned: bool) -> np.ndarray:
        """The last position's logits, with the learned rows' logits appended when ``learned``."""
        logits = np.ctypeslib.as_array(self._lib.llama_get_logits_ith(self.model.ctx, -1), shape=(self.width,))
        if not learned:
            return logits
        pointer = self._lib.llama_get_embeddings_ith(self.model.ctx, -1)
        if not pointer:
            raise ToolDecError("llama.cpp returned no hidden state: the last token was evaluated without embeddings")
        hidden = np.ctypeslib.as_array(pointer, shape=(self._dim,))
        return np.concatenate([logits, self.learned.logits(hidden)])

    def next_logits(self, ids: Sequence[int]) -> np.ndarray:
        """The next-token logits after ``ids`` (learned ids allowed), learned rows included (a copy)."""
        self._feed(self.model_ids(ids), True)
        return self._scores(True).copy()

    # -- generation ---------------------------------------------------------------------------

    def generate(
        self,
        prompt_ids: Sequence[int],
        *,
        max_new_tokens: int,
        temperature: float = 0.0,
        grammar: Grammar | None = None,
        tool_choice: ToolChoice = "auto",
        parallel_tool_calls: bool = True,
        max_calls: int | None = None,
        stop_after_call: Dialect | None = None,
        prefix: str = "",
    ) -> Generation:
        """Generate after ``prompt_ids``; see ``LlamaCppGenerator.generate``.

        With a ``grammar`` (built on :attr:`vocab`), a learned token is a trigger of tool mode;
        without one, a learned token writes its expansion and the model goes on unconstrained.
        The returned ids are what the model read (learned tokens as their expansions).
        """
        max_new_tokens = min(max_new_tokens, self.model.n_ctx() - len(prompt_ids))
        machine = None
        if grammar is not None:
            if grammar.vocab is not self.vocab and grammar.vocab.fingerprint != self.vocab.fingerprint:
                raise ToolDecError("the grammar must be built on this generator's extended vocabulary (.vocab)")
            machine = Machine(grammar, tool_choice=tool_choice, parallel_tool_calls=parallel_tool_calls,
                              max_calls=max_calls)
            machine.check_budget(max_new_tokens)  # refused before any decoding, never an empty mask later
        eos = set(self.eos_ids)
        in_call = False
        text = bytearray()
        calls_seen = len(stop_after_call.parse_calls(prefix)) if stop_after_call is not None and machine is None else 0

        def learned_now() -> bool:
            if not self.learned.size:
                return False
            return (not in_call) if machine is None else machine.mode is Mode.TEXT

        self._feed(self.model_ids(prompt_ids), learned_now())
        ids: list[int] = []
        masking, steps = 0.0, 0
        ended = closed = False
        while len(ids) < max_new_tokens:
            scores = self._scores(learned_now())
            if machine is not None:
                start = time.perf_counter()
                steps += 1
                allowed = machine.allowed_token_ids(max_new_tokens - len(ids))
                allowed = allowed[allowed < scores.size]
                if not allowed.size:
                    raise ToolDecError(f"no token is allowed at step {len(ids)}: the constraint is unsatisfiable")
                token = pick_token(scores, None if allowed.size == scores.size else allowed, temperature, self._rng)
                if not machine.advance(token):
                    raise ToolDecError(f"token {token} was picked from the mask but the machine refuses it")
                masking += time.perf_counter() - start
            else:
                token = pick_token(scores, None, temperature, self._rng)
            written = [token]
            if token >= self.width:
                self.events.append(Fired(len(ids), self.learned.names[token - self.width]))
                written = self.expansions[token - self.width]
                if machine is None:
                    in_call = True
                elif written and not all(machine.advance(t) for t in written):
                    raise ToolDecError(f"the expansion of {self.learned.names[token - self.width]!r} leaves the grammar")
            ids.extend(written)
            if token in eos:
                ended = True
                break
            for t in written:
                text += self.vocab.token_bytes[t] or b""
            in_text = (not in_call) if machine is None else machine.mode is Mode.TEXT
            if self.stop and in_text and any(s in text for s in self.stop):
                ended = True
                break
            if machine is not None:
                if machine.is_done() or (stop_after_call is not None and machine.call_just_closed):
                    closed = machine.call_just_closed
                    break
            elif written and stop_after_call is not None:
                found = len(stop_after_call.parse_calls(prefix + text.decode("utf-8", errors="replace")))
                if found > calls_seen:
                    closed = True
                    break
            if token >= self.width and self.stop_after_learned:
                closed = True
                break
            if written and len(ids) < max_new_tokens:
                self._eval(written, learned_now())
        self._switch(False)  # leave the shared context as plain generators expect it
        return Generation(ids, ended, closed, masking, steps)


def learned_decoder(generator: LearnedGenerator, tools: Any, **options: Any) -> Any:
    """A runtime ``ToolDecoder`` that decodes with ``generator`` (and its learned tokens).

    ``options`` go to ``ToolDecoder`` (``dialect``, ``constrained``, budgets). With
    ``constrained=True`` the dialect's trigger should be a learned token's name (``"<T>"``), and
    the grammar is built on the generator's extended vocabulary; with ``constrained=False``
    toolkens are chosen freely and write their expansions.

    Examples:
        ``learned_decoder(LearnedGenerator(llm, tokenizer, vocab, LearnedTokens.load("t.npz")),
        tools, dialect=MyTriggerDialect(), constrained=True)``
    """
    from ..runtime import ToolDecoder

    decoder = ToolDecoder(generator.model, generator.tokenizer, tools, vocab=generator.base_vocab, **options)
    decoder.generator = generator
    decoder.vocab = generator.vocab
    decoder.grammar = Grammar(decoder.tools, generator.vocab, decoder.dialect)
    return decoder
