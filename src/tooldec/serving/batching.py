"""``tooldec serve --parallel N``: up to N requests generating at once in one llama.cpp context
(docs/serving.md). One worker thread owns a :class:`~tooldec.backends.llamabatch.SlotBatch`; each
round evaluates the next chunk of the oldest prompt, then one batch of every running job's last
token and its jump-forward draft, and each job picks from its rows with its own
:class:`~tooldec.serving.worker.JobRun` (the loop of ``--parallel 1``, cut per round). Running
answers so wait for one chunk of a new prompt, not all of it. Requests are checked against a
slot's context, ``n_ctx / N``.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ..backends.generation import JUMP_LIMIT
from ..backends.llamabatch import SlotBatch
from ..backends.llamacpp import LlamaCppGenerator
from ..backends.promptcache import PromptCache
from .engine import Constraints
from .worker import Done, Job, JobRun, Worker

__all__ = ["BatchWorker"]


@dataclass
class Running:
    """A job in a slot; ``tokens``: what the next batch evaluates for it, its pick and then its draft
    (empty while its prompt is evaluated)."""

    slot: int
    run: JobRun
    tokens: list[int] = field(default_factory=list)


class BatchWorker(Worker):
    """The thread that steps up to ``slots.slots`` jobs together in the context ``slots`` (only
    this worker's thread touches it from then on)."""

    def __init__(self, generator: LlamaCppGenerator, slots: SlotBatch, constraints: Constraints, *,
                 max_queue: int = 256) -> None:
        super().__init__(generator, constraints, max_queue=max_queue)
        self.slots = slots
        self.context = slots.context
        self._used = [0] * slots.slots  # per slot, when it last took a job (the worker thread's)
        self._most = min(JUMP_LIMIT, slots.capacity // slots.slots) - 1  # a draft's tokens: every slot's fit a batch
        self.widest = 0  # the most jobs stepped in one batch so far

    @property
    def prompt_cache(self) -> PromptCache | None:
        return self.slots.cache

    @property
    def decodes(self) -> int:
        return self.slots.decodes

    def _end(self, running: Running | JobRun, done: Done | None = None) -> None:
        run = running.run if isinstance(running, Running) else running
        if isinstance(running, Running):
            self.slots.drop(running.slot)
        self.release(run.job)
        self.finished(run.job, done or run.end())

    def _run(self) -> None:
        active: dict[int, Running] = {}  # in the order the jobs came: the oldest prompt goes first
        try:
            while True:
                free = [slot for slot in range(self.slots.slots) if slot not in active]
                jobs = self.admit(len(free), wait=not active)
                if not jobs and not active:
                    return
                start = time.perf_counter()
                for job in jobs:
                    self._join(job, free, active)
                self._step(active)
                self.busy_seconds += time.perf_counter() - start
        finally:
            for running in active.values():
                running.run.job.cancelled.set()
                self._end(running)
            self.slots.close()

    def _join(self, job: Job, free: list[int], active: dict[int, Running]) -> None:
        """Give ``job`` the free slot sharing most of its prompt; the batches evaluate the rest."""
        run = JobRun(self, job)
        if run.refused is not None or job.cancelled.is_set():
            self._end(run, run.refused or Done("cancelled", len(job.prompt_ids), 0, "the request was cancelled"))
            return
        slot = max(free, key=lambda s: (self.slots.shared(s, job.prompt_ids), -self._used[s]))
        self._used[slot] = self.jobs_started  # a new prompt goes to the slot used longest ago
        try:
            self.slots.begin(slot, job.prompt_ids)
            run.stepper.ahead(run.budget)
        except Exception as error:
            run.stepper.close()
            self._end(run, Done("error", len(job.prompt_ids), 0, f"{type(error).__name__}: {error}"))
            return
        free.remove(slot)
        active[slot] = Running(slot, run)

    def _fail(self, active: dict[int, Running], running: Running, error: Exception) -> None:
        del active[running.slot]
        running.run.stepper.close()
        self._end(running, Done("error", len(running.run.job.prompt_ids), running.run.made,
                                f"{type(error).__name__}: {error}"))

    def _step(self, active: dict[int, Running]) -> None:
        """One round: a chunk of the oldest prompt (its job's first pick if it ended), then every
        running job's tokens evaluated and its next ones taken."""
        for slot, running in list(active.items()):  # a client gone is stopped before the batch
            if running.run.job.cancelled.is_set():
                del active[slot]
                self._end(running)
        if not active:
            return
        order = [running for running in active.values() if running.tokens]
        tokens = [(running.slot, token) for running in order for token in running.tokens]
        prompted = next((running for running in active.values() if not running.tokens), None)
        self.widest = max(self.widest, len(order) + (prompted is not None))
        for running in order:
            running.run.stepper.ahead(running.run.budget)
        try:
            rows, first = self.slots.step(tokens, None if prompted is None else prompted.slot)
        except Exception as error:
            for running in [*order, *([prompted] if prompted is not None else [])]:
                self._fail(active, running, error)
            return
        at = 0
        for running in order:
            at += len(running.tokens)
            self._take(active, running, rows[at - len(running.tokens):at])
        if prompted is not None and first is not None:
            self._take(active, prompted, [first])

    def _take(self, active: dict[int, Running], running: Running, rows: Sequence[np.ndarray]) -> None:
        """The job's picks from ``rows``: one per draft token while they confirm it, the rest of the
        draft forgotten by the slot, one more after a draft kept whole; then the next draft."""
        run, draft = running.run, running.tokens[1:]
        stepper = run.stepper
        try:
            kept, over = 0, False  # draft tokens confirmed
            for logits in rows:
                expected = draft[kept] if kept < len(draft) else None
                if expected is None:
                    token = stepper.step(logits, run.budget)
                else:
                    token = stepper.confirm(logits, run.budget, expected)
                over = run.take(token)
                if token != expected:
                    break
                kept += 1
                if over:
                    break
            self.slots.forget(running.slot, len(draft) - kept)
            if not over:
                running.tokens = [token, *stepper.forced(run.budget, self._most)]
        except Exception as error:
            self._fail(active, running, error)
            return
        if over:
            del active[running.slot]
            self._end(running)
