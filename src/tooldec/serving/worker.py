"""One llama.cpp context, one thread: requests are queued and run one after another.

A ``llama_cpp.Llama`` holds one KV cache, which two requests stepping it in turn would corrupt:
every request becomes a :class:`Job` on a bounded queue, and one worker thread runs them with the
loop of ``tooldec run`` (``LlamaCppGenerator.tokens``), handing the events back to the request's
event loop (the threads: docs/DESIGN.md, concurrency contract).
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..backends.llamacpp import LlamaCppGenerator
from ..backends.promptcache import PromptCache
from ..decoding import Machine, Mode
from ..errors import BudgetError
from .assemble import Assembler, ContentEvent, Event
from .engine import Constraints

__all__ = ["Done", "Job", "JobRun", "QueueFull", "Worker"]


@dataclass(frozen=True)
class Done:
    """The last event of a job: why it stopped and what it cost."""

    finish_reason: str
    prompt_tokens: int
    completion_tokens: int
    error: str | None = None


@dataclass
class Job:
    """One request's generation (``specs`` empty: unconstrained). ``emit`` is called from the
    worker thread with each event, then a :class:`Done` (none for a job cancelled before it ran);
    time to first token counts from ``submitted``."""

    prompt_ids: list[int]
    specs: Sequence[Any]
    key: str
    tool_choice: str
    parallel_tool_calls: bool
    max_tokens: int
    temperature: float
    seed: int | None
    emit: Callable[[Event | Done], None]
    cancelled: threading.Event = field(default_factory=threading.Event)
    submitted: float = field(default_factory=time.perf_counter)


class QueueFull(Exception):
    """More requests are waiting than the server accepts, or it is shutting down; ``retry_after``:
    seconds until a retry may find room (the queue's work at the mean job time)."""

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class Worker:
    """The thread that runs jobs on a loaded llama.cpp model (only it touches ``generator`` from
    now on); more than ``max_queue`` jobs waiting are refused with :class:`QueueFull`. ``/metrics``
    describes its counters."""

    def __init__(self, generator: LlamaCppGenerator, constraints: Constraints, *, max_queue: int = 256) -> None:
        if max_queue < 1:
            raise ValueError(f"max_queue must be >= 1, got {max_queue}")
        self.generator = generator
        self.constraints = constraints
        self.eos = set(generator.eos_ids)
        self.context = int(generator.model.n_ctx())
        self.max_queue = max_queue
        self._waiting: deque[Job] = deque()
        self._changed = threading.Condition()  # guards _waiting, _running and _closing
        self._running: list[Job] = []
        self._closing = False
        self._thread = threading.Thread(target=self._run, name="tooldec-llama", daemon=True)
        self.jobs_started = self.jobs_done = self.jobs_cancelled = 0
        self.tokens_generated = self.calls_returned = self.calls_cut = self.jobs_with_tokens = 0
        self.masking_seconds = self.busy_seconds = self.first_token_seconds = 0.0
        self.refusals: dict[str, int] = {}
        self.tokens_forced = 0

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        """Refuse new jobs, cancel the waiting and running ones (after the current token), end the thread."""
        with self._changed:
            self._closing = True
            for job in self._waiting:
                job.cancelled.set()
                job.emit(Done("cancelled", len(job.prompt_ids), 0, "the server is shutting down"))
            self.jobs_cancelled += len(self._waiting)
            self._waiting.clear()
            self._changed.notify_all()
            for job in self._running:
                job.cancelled.set()
        if self._thread.is_alive():
            self._thread.join()

    def is_alive(self) -> bool:
        return self._thread.is_alive()

    @property
    def waiting(self) -> int:
        return len(self._waiting)

    @property
    def prompt_cache(self) -> PromptCache | None:
        """Where evaluated prompts are kept between requests, if anywhere."""
        return self.generator.prompt_cache

    @property
    def decodes(self) -> int:
        """``llama_decode`` calls so far: prompt chunks, tokens, drafts (each may take several passes)."""
        return self.generator.decodes

    @property
    def running(self) -> int:
        """Jobs generating now."""
        return len(self._running)

    def submit(self, job: Job) -> None:
        """Queue a job (:class:`QueueFull` at the bound, or shutting down)."""
        with self._changed:
            if self._closing:
                raise QueueFull("the server is shutting down", retry_after=1)
            if len(self._waiting) >= self.max_queue:
                per_job = self.busy_seconds / self.jobs_done if self.jobs_done else 1.0
                wait = max(1, min(600, round(per_job * (len(self._waiting) + 1))))
                raise QueueFull(f"{self.max_queue} requests are already waiting; retry in {wait} s", retry_after=wait)
            self._waiting.append(job)
            self._changed.notify()

    def cancel(self, job: Job) -> None:
        """The client of ``job`` went away: out of the queue now, or stopped after its current token."""
        with self._changed:
            if job.cancelled.is_set():
                return
            job.cancelled.set()
            if job in self._waiting:
                self._waiting.remove(job)
                self.jobs_cancelled += 1

    def _next(self) -> Job | None:
        with self._changed:
            self._running.clear()
        jobs = self.admit(1, wait=True)
        return jobs[0] if jobs else None

    def admit(self, most: int, *, wait: bool) -> list[Job]:
        """Up to ``most`` jobs from the queue, now running (the worker thread's); waits for one
        when ``wait``; ``[]`` once closing leaves nothing to run."""
        with self._changed:
            while wait and not self._waiting and not self._closing:
                self._changed.wait()
            jobs: list[Job] = []
            while self._waiting and len(jobs) < most:
                job = self._waiting.popleft()
                self._running.append(job)
                self.jobs_started += 1
                jobs.append(job)
            return jobs

    def release(self, job: Job) -> None:
        """``job`` runs no longer (before :meth:`finished` answers it)."""
        with self._changed:
            if job in self._running:
                self._running.remove(job)

    def _run(self) -> None:
        while (job := self._next()) is not None:
            start = time.perf_counter()
            try:
                done = self._generate(job)
            except Exception as error:
                done = Done("error", len(job.prompt_ids), 0, f"{type(error).__name__}: {error}")
            self.busy_seconds += time.perf_counter() - start
            self.finished(job, done)

    def finished(self, job: Job, done: Done) -> None:
        """Count ``job`` done and tell its client (from the worker thread)."""
        if done.finish_reason == "cancelled":
            self.jobs_cancelled += 1
        self.jobs_done += 1
        job.emit(done)

    def budget(self, job: Job) -> int:
        """Tokens ``job`` may generate: its ``max_tokens``, within what the context has left (the
        last token is never evaluated, so prompt and budget may fill the context)."""
        return min(job.max_tokens, self.context - len(job.prompt_ids))

    def _generate(self, job: Job) -> Done:
        run = JobRun(self, job)
        if run.refused is not None:
            return run.refused
        with run.stepper:
            for token in () if job.cancelled.is_set() else self.generator.tokens(job.prompt_ids, run.stepper,
                                                                                  run.budget):
                if run.take(token):
                    break
        return run.end()


class JobRun:
    """One job's generation as its tokens come, whichever loop evaluates them: its cursor, stepper
    and assembler; the events go to its client, the costs to the worker (from the worker thread,
    the only one that touches a run). ``refused``: why the job cannot run (its :class:`Done`)."""

    def __init__(self, worker: Worker, job: Job) -> None:
        self.worker = worker
        self.job = job
        self.machine = self._machine()
        constraints = worker.constraints
        named = constraints.dialect.named_openers  # the names only matter to a named opener
        machine = self.machine
        self.assembler = Assembler(constraints.dialect, watch=machine is not None,
                                   names=machine.advanced.grammar.names if machine is not None and named else None)
        self.budget = worker.budget(job)
        self.refused: Done | None = None
        if self.budget < 1:
            self.refused = Done("error", len(job.prompt_ids), 0,
                                f"the prompt has {len(job.prompt_ids)} tokens; the context holds {worker.context}")
        elif machine is not None:
            try:  # the service checks this before queueing; a job handed in directly is checked here
                machine.check_budget(self.budget)
            except BudgetError as error:
                self.refused = Done("error", len(job.prompt_ids), 0, str(error))
        self.stepper = worker.generator.stepper(machine, job.temperature, np.random.default_rng(job.seed))
        self.made = 0
        self.finish = "length"
        self.forced = job.tool_choice not in ("auto", "none")  # the answer is its calls: text after them ends it

    def _machine(self) -> Machine | None:
        job, constraints = self.job, self.worker.constraints
        if not job.specs:
            return None
        compiled = constraints.compile(job.specs, job.key)
        return constraints.machine(compiled, tool_choice=job.tool_choice, parallel_tool_calls=job.parallel_tool_calls)

    def take(self, token: int) -> bool:
        """Take the next token (its events go out); whether the job is over (an end token, the
        turn over, its client gone, its budget spent)."""
        job, machine, worker = self.job, self.machine, self.worker
        self.made += 1
        self.budget -= 1
        if self.made == 1:
            worker.first_token_seconds += time.perf_counter() - job.submitted
            worker.jobs_with_tokens += 1
        if token in worker.eos:
            self.finish = "stop"
            return True
        events = self.assembler.feed(_bytes(worker.constraints.vocab, token),
                                     in_call=machine is not None and _in_call(machine),
                                     in_reasoning=machine is not None and machine.advanced.mode is Mode.REASONING)
        if self.forced and self.assembler.calls and any(
                isinstance(event, ContentEvent) and event.text.strip() for event in events):
            self.finish = "stop"  # a forced message is its calls: the model answers them, the client runs them
            return True
        self._emit(events)
        if machine is not None and machine.advanced.turn_over:  # the client runs the calls
            self.finish = "stop"
            return True
        if job.cancelled.is_set():  # the client went away
            self.finish = "cancelled"
            return True
        return self.budget < 1

    def _emit(self, events: list[Event]) -> None:
        """Send ``events`` to the client; after a forced message's calls, without content (the
        whitespace between calls)."""
        if self.forced and self.assembler.calls:
            events = [event for event in events if not isinstance(event, ContentEvent)]
        for event in events:
            self.job.emit(event)

    def end(self) -> Done:
        """Close the stepper, flush the last events, add the costs to the worker; the job's :class:`Done`."""
        self.stepper.close()
        job, machine, worker, stepper = self.job, self.machine, self.worker, self.stepper
        worker.tokens_generated += self.made
        worker.masking_seconds += stepper.masking_seconds
        worker.tokens_forced += stepper.forced_steps
        for label, count in stepper.refusals.items():
            worker.refusals[label] = worker.refusals.get(label, 0) + count
        finish = "cancelled" if job.cancelled.is_set() else self.finish
        if machine is not None and _in_call(machine) and finish != "cancelled":
            worker.calls_cut += 1
        self._emit(self.assembler.finish())
        worker.calls_returned += len(self.assembler.calls)
        if finish == "cancelled":
            return Done(finish, len(job.prompt_ids), self.made, "the request was cancelled")
        if self.assembler.calls and finish == "stop":
            finish = "tool_calls"
        return Done(finish, len(job.prompt_ids), self.made)


def _bytes(vocab: Any, token: int) -> bytes:
    """A token's bytes; a special token's text; nothing for an unused id."""
    if 0 <= token < vocab.size and vocab.token_bytes[token] is not None:
        return bytes(vocab.token_bytes[token])
    special = vocab.special.get(token)
    return special.encode() if special is not None else b""


def _in_call(machine: Machine) -> bool:
    return machine.advanced.mode is Mode.TOOL
