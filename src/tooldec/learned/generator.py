"""Decoding with learned tokens on llama.cpp: ``<T>`` then the tool under the grammar, or toolkens.

In text mode the learned rows' logits (from llama.cpp's embeddings output, switched on only for
those steps) are appended to the model's, as special ids past its own in an extended vocabulary:
a dialect whose ``trigger`` is ``"<T>"`` enters tool mode on it. The model reads only a learned
token's expansion, and ``generate`` returns only the ids it read; ``events`` says where they fired.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..backends.generation import Generation, Request
from ..backends.llamacpp import LlamaCppGenerator, evaluate_prompt, keep_prefix
from ..backends.step import Stepper
from ..decoding import Grammar
from ..decoding.machine import Mode
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


class LearnedGenerator(LlamaCppGenerator):
    """A ``llama_cpp.Llama`` with learned output rows, scored by ``generate`` and ``next_logits``
    (not by the plain ``tokens`` it inherits). ``vocab`` is padded to the logits.

    Args:
        stop_after_learned: End as soon as a learned token and its expansion are written (to read
            which toolken was chosen without its arguments).
        stop: Strings that end a generation in text mode: a raw few-shot prompt has no end of
            turn, and the model would go on with the next question.
    """

    def __init__(self, llm: Any, tokenizer: Any, vocab: Vocabulary, learned: LearnedTokens, *,
                 stop_after_learned: bool = False, stop: Sequence[str] = ()) -> None:
        import llama_cpp

        if vocab.size != int(llm.n_vocab()):
            raise ToolDecError(f"the vocabulary has {vocab.size} ids but the model {llm.n_vocab()} logits: pad it")
        learned.check(int(llm.n_embd()), vocab.fingerprint)
        super().__init__(llm, tokenizer, vocab)
        self.learned = learned
        self.base_vocab = vocab
        self.vocab = extended_vocabulary(vocab, learned.names)
        self.expansions = [list(tokenizer.encode(text, add_special_tokens=False)) if text else []
                           for text in learned.expansions]
        self.stop_after_learned = stop_after_learned
        self.stop = tuple(text.encode() for text in stop)
        self.events: list[Fired] = []
        """Where learned tokens fired, every ``generate`` since the list was last cleared."""
        self._lib = llama_cpp
        self._dim = int(llm.n_embd())

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
        kept = keep_prefix(self.model, ids)
        self._switch(False)
        evaluate_prompt(self.model, ids[:-1], kept)
        self._switch(hidden)
        self.model.eval(list(ids[-1:]))

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

    def run(self, prompt_ids: Sequence[int], request: Request) -> Generation:
        """With a ``grammar`` (built on :attr:`vocab`) a learned token triggers tool mode; without,
        it writes its expansion. The ids returned are what the model read (expansions)."""
        grammar, stop_after_call, prefix = request.grammar, request.stop_after_call, request.prefix
        max_new_tokens = min(request.max_new_tokens, self.model.n_ctx() - len(prompt_ids))
        if grammar is not None and grammar.vocab is not self.vocab and grammar.vocab.fingerprint != self.vocab.fingerprint:
            raise ToolDecError("the grammar must be built on this generator's extended vocabulary (.vocab)")
        machine = request.machine()
        if machine is not None:
            machine.check_budget(max_new_tokens)  # refused before any decoding, never an empty mask later
        eos = set(self.eos_ids)
        in_call = False
        text = bytearray()
        calls_seen = len(stop_after_call.parse_calls(prefix)) if stop_after_call is not None and machine is None else 0

        def in_text() -> bool:
            return (not in_call) if machine is None else machine.advanced.mode is Mode.TEXT

        def learned_now() -> bool:
            return bool(self.learned.size) and in_text()

        self._feed(self.model_ids(prompt_ids), learned_now())
        ids: list[int] = []
        ended = closed = False
        stepper = Stepper(machine, self.width, temperature=request.temperature, rng=self.rng)
        while len(ids) < max_new_tokens:
            token = stepper.step(self._scores(learned_now()), max_new_tokens - len(ids))
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
            if self.stop and in_text() and any(s in text for s in self.stop):
                ended = True
                break
            if machine is not None:
                if stop_after_call is not None and machine.advanced.call_just_closed:  # done only at an end token
                    closed = True
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
        return Generation(ids, ended, closed, stepper.masking_seconds, stepper.steps, 0.0, stepper.checked,
                          stepper.refusals)


def learned_decoder(generator: LearnedGenerator, tools: Any, **options: Any) -> Any:
    """A runtime ``ToolDecoder`` that decodes with ``generator``; ``options`` go to it. With
    ``constrained=True`` the dialect's trigger should be a learned token's name (``"<T>"``)."""
    from ..runtime import ToolDecoder

    decoder = ToolDecoder(generator.model, generator.tokenizer, tools, vocab=generator.base_vocab, **options)
    decoder.generator = generator
    decoder.vocab = generator.vocab
    decoder.grammar = Grammar(decoder.tools, generator.vocab, decoder.dialect)
    return decoder
