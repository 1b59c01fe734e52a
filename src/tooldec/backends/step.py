"""One decoding step: a row of logits and a cursor in, the next token out (docs/DESIGN.md, "One
step"). Every loop that samples its own tokens takes each from a :class:`Stepper`; a sampler not
ours takes the mask half alone (:func:`tooldec.decoding.fill_bitmasks`)."""

from __future__ import annotations

import os
import time
from concurrent.futures import Future, ThreadPoolExecutor

import numpy as np

from ..decoding import Machine
from ..decoding.machine import Lists
from ..errors import ToolDecError
from .jump import Encoder, forced_tokens

__all__ = ["FEW", "Stepper", "core_beside", "pick_token"]

FEW = 16
"""Allowed lists this short (most masks inside a call) are picked from in Python: with the caches
cold after a forward pass, a third cheaper than NumPy (``benchmarks/cold_replay.py --sweep-mb 64 --phases``)."""


def pick_token(logits: np.ndarray, allowed: np.ndarray | None, temperature: float,
               rng: np.random.Generator, refused: np.ndarray | None = None) -> int:
    """The next token from one row of logits: the best allowed one, or a sample at ``temperature``
    (0: greedy). ``allowed``: the sorted allowed ids (``None``: all), or else ``refused``: the
    sorted ids not allowed (``Mask.pick_lists`` gives the shorter list).

    Examples:
        >>> rng = np.random.default_rng(0)
        >>> logits = np.array([3.0, 1.0, 2.0], dtype=np.float32)
        >>> pick_token(logits, None, 0.0, rng), pick_token(logits, np.array([1, 2]), 0.0, rng)
        (0, 2)
        >>> pick_token(logits, np.array([1]), 1.0, rng), pick_token(logits, None, 0.0, rng, refused=np.array([0]))
        (1, 2)
        >>> pick_token(logits, None, 0.0, rng, refused=np.array([1]))
        0
    """
    if refused is not None and allowed is None:
        if temperature <= 0:  # the best token is rarely refused: check it before copying the row
            best = int(np.argmax(logits))
            at = int(np.searchsorted(refused, best))
            if at == refused.size or int(refused[at]) != best:
                return best
        logits = logits.copy()
        logits[refused] = -np.inf
    if allowed is not None:  # only the allowed logits are read: a few in a call, the vocabulary in text
        if temperature <= 0 and allowed.size <= FEW:  # the first of the best, as argmax takes it
            return max(allowed.tolist(), key=logits.item)  # type: ignore[no-any-return]
        chosen = logits[allowed]
        if temperature <= 0:
            return int(allowed[int(np.argmax(chosen))])
        return int(allowed[_sample(chosen, temperature, rng)])
    if temperature <= 0:
        return int(np.argmax(logits))
    return _sample(logits, temperature, rng)


def _sample(logits: np.ndarray, temperature: float, rng: np.random.Generator) -> int:
    weights = np.exp(((logits - logits.max()) / temperature).astype(np.float64))
    return int(rng.choice(weights.size, p=weights / weights.sum()))


class Stepper:
    """Turns each step's logits into the next token under one cursor, and counts what masking cost.
    A loop calls :meth:`ahead` before the forward pass whose logits the next step reads, then
    :meth:`step` with them, and :meth:`close` at the end (or uses it as a context manager).

    Args:
        machine: The cursor (``None``: unconstrained); a loop may replace it between steps.
        check_first: Without the worker, take the model's own pick when the grammar allows it and
            make a mask only when it does not (exact: docs/DESIGN.md, "One step").
        mask_worker: Make an uncached mask on a worker thread while the model evaluates: worth it
            where a core is free (:func:`core_beside`; ``benchmarks/end_to_end.py --mask-worker on|off``).
        encode: The tokenizer's encode, for jump-forward drafts (:meth:`forced`; :mod:`.jump`).

    Attributes:
        masking_seconds: The loop's time masking (the worker's: ``overlapped_seconds``).
        steps, checked: Steps under the cursor, and those whose pick was the model's own.
        forced_steps, jumps: Draft tokens the model's pick confirmed (no forward pass of their
            own; each is a step too), and the drafts.
        refusals: How often the model's own pick would have written text the format refuses
            (``machine.advanced.refusal``), by name: a model writing its own tool results shows here.

    Examples:
        >>> from tooldec import Grammar, ToolSet, Vocabulary
        >>> from tooldec.dialects import Hermes
        >>> vocab = Vocabulary.from_tokens([bytes([b]) for b in range(256)] + [b"<tool_call>"])
        >>> def add(a: int, b: int) -> int:
        ...     '''Add two numbers.'''
        ...     return a + b
        >>> machine = Machine(Grammar(ToolSet([add]), vocab, Hermes()), tool_choice="required")
        >>> logits = np.zeros(vocab.size, dtype=np.float32)
        >>> logits[ord("H")], logits[256] = 5.0, 1.0  # the model would write "H"; a call must come first
        >>> with Stepper(machine, vocab.size) as stepper:
        ...     vocab.token_bytes[stepper.step(logits, budget=64)], stepper.checked
        (b'<tool_call>', 0)
    """

    def __init__(self, machine: Machine | None, width: int, *, temperature: float = 0.0,
                 rng: np.random.Generator | None = None, check_first: bool = True, mask_worker: bool = False,
                 encode: Encoder | None = None) -> None:
        self.machine = machine
        self.width = width
        self.temperature = temperature
        self.rng = rng or np.random.default_rng()
        self.mask_worker = mask_worker
        self.checking = check_first and not mask_worker  # then no mask is made ahead
        self.masking_seconds = 0.0
        self.overlapped_seconds = 0.0  # written by the worker, read after a result(): no race
        self.steps = 0
        self.checked = 0
        self.encode = encode
        self.forced_steps = 0
        self.jumps = 0
        self.refusals: dict[str, int] = {}
        self._longest: int | None = None  # the draft length the model's picks lately kept (None: not cut yet)
        self._draft: list[int] = []
        self._kept = 0  # tokens of the draft confirmed so far
        self._pending: Future[Lists] | Lists | None = None
        self._pool: ThreadPoolExecutor | None = None

    def __enter__(self) -> Stepper:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def ahead(self, budget: int) -> None:
        """Before the forward pass: look up the mask the next step needs under ``budget``, or start
        it on the worker (a lookup costs less than a hand-off). Nothing while picks are checked."""
        machine = self.machine
        if machine is None or self.checking:
            return
        start = time.perf_counter()
        known = machine.advanced.known_lists(budget, self.width)
        if known is not None:
            self._pending = known
        elif self.mask_worker:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tooldec-mask")
            self._pending = self._pool.submit(self._timed, machine, budget)
        self.masking_seconds += time.perf_counter() - start

    def _timed(self, machine: Machine, budget: int) -> Lists:
        start = time.perf_counter()
        try:
            return machine.advanced.lists(budget, self.width)
        finally:
            self.overlapped_seconds += time.perf_counter() - start

    def step(self, logits: np.ndarray, budget: int) -> int:
        """The next token from ``logits`` (one row, never written; learned rows may follow the
        vocabulary's), the cursor advanced by it; ``budget``: tokens left, this one included.

        Raises:
            ToolDecError: No token is allowed, or the cursor refuses one from its own mask.
        """
        machine = self.machine
        if machine is None:
            return pick_token(logits, None, self.temperature, self.rng)
        self.steps += 1
        if self.checking:  # the model's own pick (what any loop does: not counted), if allowed
            token = pick_token(logits, None, self.temperature, self.rng)
            start = time.perf_counter()
            if machine.advanced.advance_within(token, budget):
                self.checked += 1
                self.masking_seconds += time.perf_counter() - start
                return token
            self._note_refusal(machine, token)
            lists = machine.advanced.lists(budget, logits.size)
        else:
            start = time.perf_counter()
            pending, self._pending = self._pending, None
            if pending is None:
                pending = machine.advanced.lists(budget, logits.size)
            lists = pending.result() if isinstance(pending, Future) else pending
        allowed, refused = lists
        if allowed is not None:
            if allowed.size and allowed[-1] >= logits.size:  # ids past these logits (learned rows left out)
                allowed = allowed[: int(np.searchsorted(allowed, logits.size))]
            if not allowed.size:
                raise ToolDecError(f"no token is allowed at step {self.steps - 1} (text so far: "
                                   f"{machine.advanced.text[-80:]!r}); the constraint is unsatisfiable")
        token = pick_token(logits, allowed, self.temperature, self.rng, refused)
        if not self.checking and refused is not None and machine.advanced.refuses:  # in text: the model's own pick refused?
            best = int(np.argmax(logits))
            if best != token:
                self._note_refusal(machine, best)
        if not machine.advance(token):
            raise ToolDecError(f"token {token} was picked from the mask but the machine refuses it")
        self.masking_seconds += time.perf_counter() - start
        return token

    def forced(self, budget: int, most: int | None = None) -> list[int]:
        """The tokens the grammar forces next within ``budget``, at most ``most``: a draft to
        evaluate in one batch and :meth:`confirm` in order (the cursor does not move). Cut to what
        the model kept of the last draft it cut, doubled after each kept whole, so a model that
        keeps cutting a long span evaluates at most about twice its tokens."""
        machine = self.machine
        if machine is None or self.encode is None:
            return []
        start = time.perf_counter()
        if self._longest is not None:
            most = self._longest if most is None else min(most, self._longest)
        found = forced_tokens(machine, self.encode, budget, most)
        if found:
            self.jumps += 1
        self._draft, self._kept = found, 0
        self.masking_seconds += time.perf_counter() - start
        return found

    def confirm(self, logits: np.ndarray, budget: int, expected: int) -> int:
        """:meth:`step` at the next place of the last draft, from its batch's logits there; a pick
        that is ``expected`` (the draft's token) counts in ``forced_steps``."""
        token = self.step(logits, budget)
        if token != expected:
            self._longest = max(self._kept, 1)
            return token
        self.forced_steps += 1
        self._kept += 1
        if self._kept == len(self._draft) and self._longest is not None:
            self._longest *= 2
        return token

    def _note_refusal(self, machine: Machine, token: int) -> None:
        label = machine.advanced.refusal(token)
        if label is not None:
            self.refusals[label] = self.refusals.get(label, 0) + 1

    def close(self) -> None:
        """Wait until the worker is done with the cursor, and let its thread go."""
        self._pending = None
        if self._pool is not None:
            self._pool.shutdown()  # after the mask it may be making
            self._pool = None


def core_beside(threads: int) -> bool:
    """Whether this process may run on more cores than ``threads`` (the model's): where a mask
    worker has a core of its own."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return cores > threads
