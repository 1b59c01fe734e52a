"""``tooldec serve --parallel N``: up to N requests generating at once in one llama.cpp context.

One worker thread owns a :class:`~tooldec.backends.llamabatch.SlotBatch` and loops: jobs from the
queue take free slots; then each round evaluates the next chunk of the oldest prompt still being
evaluated and one batch of every running job's last token, and each running job's next token is
picked from its row by its own stepper and cursor (:class:`~tooldec.serving.worker.JobRun`, the
loop of ``--parallel 1`` cut per token); a job whose prompt that chunk ended takes its first
token. Running answers so wait for one chunk of a new prompt, not all of it. A job leaves between
rounds when it ends, and one whose client went away is stopped before the next. A new job takes
the free slot whose cache shares the most of its prompt (else the one used longest ago); with a
prompt cache, the slot starts from the cache's entry instead when it shares more. Each
slot holds ``n_ctx / N`` positions: the server's context, as requests are checked against it, is
a slot's.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from ..backends.llamabatch import SlotBatch
from ..backends.llamacpp import LlamaCppGenerator
from ..backends.promptcache import PromptCache
from .engine import Constraints
from .worker import Done, Job, JobRun, Worker

__all__ = ["BatchWorker"]


@dataclass
class Running:
    """A job in a slot, and the token it took that the next batch evaluates (``None`` while its
    prompt is evaluated)."""

    slot: int
    run: JobRun
    token: int | None = None


class BatchWorker(Worker):
    """The thread that steps up to ``slots.slots`` jobs together in the context ``slots`` (only
    this worker's thread touches it from then on)."""

    def __init__(self, generator: LlamaCppGenerator, slots: SlotBatch, constraints: Constraints, *,
                 max_queue: int = 256) -> None:
        super().__init__(generator, constraints, max_queue=max_queue)
        self.slots = slots
        self.context = slots.context
        self._used = [0] * slots.slots  # per slot, when it last took a job (the worker thread's)
        self.widest = 0
        """The most jobs stepped in one batch so far."""

    @property
    def prompt_cache(self) -> PromptCache | None:
        return self.slots.cache

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
        """One round: a chunk of the oldest prompt (its job takes its first token if the chunk
        ended it), then every running job's last token evaluated and its next one taken."""
        for slot, running in list(active.items()):  # a client gone is stopped before the batch
            if running.run.job.cancelled.is_set():
                del active[slot]
                self._end(running)
        if not active:
            return
        tokens = [(running.slot, running.token) for running in active.values() if running.token is not None]
        order = [active[slot] for slot, _ in tokens]
        prompted = next((running for running in active.values() if running.token is None), None)
        self.widest = max(self.widest, len(order) + (prompted is not None))
        for running in order:
            running.run.stepper.ahead(running.run.budget)
        try:
            rows, first = self.slots.step(tokens, None if prompted is None else prompted.slot)
        except Exception as error:
            for running in [*order, *([prompted] if prompted is not None else [])]:
                self._fail(active, running, error)
            return
        picks = list(zip(order, rows))
        if prompted is not None and first is not None:
            picks.append((prompted, first))
        for running, logits in picks:
            run = running.run
            try:
                running.token = run.stepper.step(logits, run.budget)
                over = run.take(running.token)
            except Exception as error:
                self._fail(active, running, error)
                continue
            if over:
                del active[running.slot]
                self._end(running)
