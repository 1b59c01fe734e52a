"""One llama.cpp context, one thread: requests are queued and run one after another.

A ``llama_cpp.Llama`` holds one KV cache; two requests stepping it in turn would corrupt each
other's context. So every request becomes a :class:`Job` on a bounded queue and one worker
thread runs them in order, with the loop of ``tooldec run`` (``LlamaCppGenerator.tokens``), and
hands the events (content, calls, the end) back to the request's event loop as they come (the
threads: docs/DESIGN.md, concurrency contract). A prompt that begins like the previous one (the same system
prompt and tools) only evaluates its new tokens.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..backends.llamacpp import LlamaCppGenerator
from ..decoding import Machine, Mode
from ..errors import BudgetError
from .assemble import Assembler, Event
from .engine import Constraints

__all__ = ["Done", "Job", "QueueFull", "Worker"]


@dataclass(frozen=True)
class Done:
    """The last event of a job: why it stopped and what it cost."""

    finish_reason: str
    prompt_tokens: int
    completion_tokens: int
    error: str | None = None


@dataclass
class Job:
    """One request's generation.

    Attributes:
        prompt_ids: The rendered prompt's tokens.
        specs: The request's tools (empty: unconstrained).
        key: Their cache key.
        tool_choice: auto, required, none or a tool name.
        parallel_tool_calls: Several calls in one message.
        max_tokens: Budget of new tokens.
        temperature: 0 for greedy.
        seed: Seeds the sampler (None: fresh entropy).
        emit: Called from the worker thread with each event, then a :class:`Done`.
        cancelled: Set by the request when its client went away.
    """

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


class QueueFull(Exception):
    """More requests are waiting than the server accepts."""


class Worker:
    """The thread that runs jobs on a loaded llama.cpp model.

    Args:
        generator: The model (only this worker's thread touches it from now on).
        constraints: Compiles request tool lists.
        max_queue: Most jobs waiting; more are refused with :class:`QueueFull`.

    Attributes:
        jobs_done, tokens_generated, masking_seconds: All jobs' count, tokens and masking time.
        refusals: What models tried to write that the format refuses, by name (``Stepper.refusals``).
    """

    def __init__(self, generator: LlamaCppGenerator, constraints: Constraints, *, max_queue: int = 256) -> None:
        self.generator = generator
        self.constraints = constraints
        self.eos = set(generator.eos_ids)
        self.context = int(generator.model.n_ctx())
        self._jobs: queue.Queue[Job | None] = queue.Queue(maxsize=max_queue)
        self._thread = threading.Thread(target=self._run, name="tooldec-llama", daemon=True)
        self.jobs_done = 0
        self.tokens_generated = 0
        self.masking_seconds = 0.0
        self.refusals: dict[str, int] = {}

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        """Finish the running job, drop the queue's place for new ones, end the thread."""
        self._jobs.put(None)
        self._thread.join()

    def is_alive(self) -> bool:
        return self._thread.is_alive()

    @property
    def waiting(self) -> int:
        return self._jobs.qsize()

    def submit(self, job: Job) -> None:
        """Queue a job.

        Raises:
            QueueFull: The queue is at its bound.
        """
        try:
            self._jobs.put_nowait(job)
        except queue.Full:
            raise QueueFull(f"{self._jobs.maxsize} requests are already waiting; retry later") from None

    def _run(self) -> None:
        while (job := self._jobs.get()) is not None:
            try:
                job.emit(self._generate(job))
            except Exception as error:
                job.emit(Done("error", len(job.prompt_ids), 0, f"{type(error).__name__}: {error}"))
            self.jobs_done += 1

    def budget(self, job: Job) -> int:
        """Tokens ``job`` may generate: its ``max_tokens``, within what the context has left."""
        return min(job.max_tokens, self.context - len(job.prompt_ids) - 1)

    def _machine(self, job: Job) -> Machine | None:
        if not job.specs:
            return None
        compiled = self.constraints.compile(job.specs, job.key)
        return self.constraints.machine(compiled, tool_choice=job.tool_choice,
                                        parallel_tool_calls=job.parallel_tool_calls)

    def _generate(self, job: Job) -> Done:
        generator, vocab = self.generator, self.constraints.vocab
        machine = self._machine(job)
        named = self.constraints.dialect.named_openers  # the names only matter to a named opener
        assembler = Assembler(self.constraints.dialect, watch=machine is not None,
                              names=machine.grammar.names if machine is not None and named else None)
        budget = self.budget(job)
        if budget < 1:
            return Done("error", len(job.prompt_ids), 0,
                        f"the prompt has {len(job.prompt_ids)} tokens; the context holds {self.context}")
        if machine is not None:
            try:  # the service checks this before queueing; a job handed in directly is checked here
                machine.check_budget(budget)
            except BudgetError as error:
                return Done("error", len(job.prompt_ids), 0, str(error))
        made = 0
        finish = "length"
        with generator.stepper(machine, job.temperature, np.random.default_rng(job.seed)) as stepper:
            for token in () if job.cancelled.is_set() else generator.tokens(job.prompt_ids, stepper, budget):
                made += 1
                if token in self.eos:
                    finish = "stop"
                    break
                for event in assembler.feed(_bytes(vocab, token), in_call=machine is not None and _in_call(machine),
                                            in_reasoning=machine is not None and machine.mode is Mode.REASONING):
                    job.emit(event)
                if machine is not None and machine.turn_over:  # the client runs the calls
                    finish = "stop"
                    break
                if job.cancelled.is_set():  # the client went away
                    break
        self.tokens_generated += made
        self.masking_seconds += stepper.masking_seconds
        for label, count in stepper.refusals.items():
            self.refusals[label] = self.refusals.get(label, 0) + count
        for event in assembler.finish():
            job.emit(event)
        if assembler.calls and finish == "stop":
            finish = "tool_calls"
        return Done(finish, len(job.prompt_ids), made)


def _bytes(vocab: Any, token: int) -> bytes:
    """A token's bytes; a special token's text; nothing for an unused id."""
    if 0 <= token < vocab.size and vocab.token_bytes[token] is not None:
        return bytes(vocab.token_bytes[token])
    special = vocab.special.get(token)
    return special.encode() if special is not None else b""


def _in_call(machine: Machine) -> bool:
    return machine.mode is Mode.TOOL
