"""tooldec as a vLLM V1 logits processor: per-request tools, batched masks, overlapped with the forward.

``update_state`` (before each forward pass) applies the batch changes and hands one job to a
worker thread: compile new tool lists, move each cursor by its new tokens, fill one int32 bitmask
for the constrained rows. ``apply`` (after the pass) joins it and writes ``-inf`` where the mask
says no. Only the worker touches cursors (docs/DESIGN.md, concurrency contract). Under async
scheduling the last sampled token is a placeholder at ``update_state``; those rows are finished in
``apply``, without the overlap. A row whose cursor cannot go on is allowed only end tokens: it
ends, never with a broken call. Requests without ``extra_args["tooldec"]`` are not touched.
"""

from __future__ import annotations

import logging
import time
import weakref
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import torch
from vllm.exceptions import VLLMValidationError
from vllm.v1.sample.logits_processor import BatchUpdate, LogitsProcessor
from vllm.v1.sample.logits_processor.builtin import process_dict_updates

from ...caches import BoundedCache
from ...decoding import Machine
from ...errors import BudgetError, ToolDecError
from ...tokens import Vocabulary
from ...tokens.hf import from_hf_tokenizer
from ..engine import Constraints
from .args import KEY, ToolDecArgs, text_key
from .stats import StepLog

if TYPE_CHECKING:
    from vllm import SamplingParams
    from vllm.config import VllmConfig

__all__ = ["ToolDecLogitsProcessor"]

log = logging.getLogger("tooldec.vllm")
PARSED_CACHE = 64
"""Most request argument texts kept parsed (by the worker thread)."""
PLACEHOLDER = -1
"""vLLM's stand-in for a sampled token not yet copied back (async scheduling)."""


@dataclass
class _Row:
    """One constrained request in the batch. The worker thread alone touches ``machine`` and
    ``consumed``; the main thread only moves rows between indices while no job runs."""

    raw: object
    """The request's ``extra_args["tooldec"]``, parsed on the worker (a long tool list is not
    decoded on the engine's own thread)."""
    output: list[int]
    max_tokens: int | None
    other_ends: np.ndarray
    """End tokens of the vocabulary that do not stop this request (vLLM stops at the request's
    stop ids; SmolLM2's tokenizer also calls ``<|endoftext|>`` an end): never allowed, or a
    closed call would be followed by them until ``max_tokens``."""
    machine: Machine | None = None
    consumed: int = 0
    failed: str | None = None
    pending: bool = field(default=False)


_VALIDATED: BoundedCache[str, bool] = BoundedCache(256, sizer=lambda _: 1)
"""Tool lists (their keys) already checked in this process: a repeated list is not checked twice."""
_CHECKERS: BoundedCache[str, Constraints] = BoundedCache(16, sizer=lambda _: 1)
"""Tool checkers by dialect and openers (a ``Constraints`` may be shared by threads)."""


def _checker(args: ToolDecArgs) -> Constraints:
    """Checks tools for the API server without a model: a byte vocabulary, made once per
    dialect and openers."""
    return _CHECKERS.get_or_make(args.dialect_key, lambda: Constraints(
        Vocabulary.from_tokens([bytes([b]) for b in range(256)]), args.make_dialect(), cache_size=1))


class ToolDecLogitsProcessor(LogitsProcessor):
    """Masks the logits of requests that carry ``extra_args["tooldec"]`` (the masks are built on the CPU)."""

    @classmethod
    def validate_params(cls, sampling_params: SamplingParams) -> None:
        """Check a request's tooldec arguments in the API server, before it is queued: a bad
        tool schema is an HTTP 400 carrying the typed error's message."""
        value = (sampling_params.extra_args or {}).get(KEY)
        if value is None:
            return
        mark = text_key(value) if isinstance(value, (str, bytes)) else None
        if mark is not None and _VALIDATED.get(mark):
            return  # the same text was checked before: not even parsed again
        try:
            args = ToolDecArgs.parse(value)
        except ValueError as error:
            raise VLLMValidationError(f"tooldec: {error}", parameter="vllm_xargs") from error
        mark = mark or args.key + args.dialect_key + args.tool_choice
        if _VALIDATED.get(mark):
            return
        constraints = _checker(args)
        try:
            tools = constraints.tools(args.tools)
        except ToolDecError as error:
            raise VLLMValidationError(f"tooldec: invalid tools: {error}", parameter="tools") from error
        if args.tool_choice not in ("auto", "required", "none") and args.tool_choice not in tools:
            raise VLLMValidationError(f"tooldec: tool_choice names {args.tool_choice!r}, which is not in tools: "
                                      f"{', '.join(tools.names)}", parameter="tool_choice")
        _VALIDATED.put(mark, True)

    _engines: ClassVar[dict[int, weakref.ref[Any]]] = {}

    def __init__(self, vllm_config: VllmConfig, device: torch.device, is_pin_memory: bool) -> None:
        from transformers import AutoTokenizer

        # Named with --logits-processors while the entry point is installed, vLLM builds this
        # class twice for one engine: the second instance stays idle instead of masking twice.
        for key in [key for key, ref in self._engines.items() if ref() is None]:
            del self._engines[key]
        owner = self._engines.get(id(vllm_config))
        self.idle = owner is not None and owner() is vllm_config
        if not self.idle:
            self._engines[id(vllm_config)] = weakref.ref(vllm_config)
        self.rows: dict[int, _Row] = {}
        self._stats: StepLog | None = None
        if self.idle:
            return
        model = vllm_config.model_config
        self.width = int(model.get_vocab_size())
        tokenizer = AutoTokenizer.from_pretrained(model.tokenizer, revision=model.tokenizer_revision,
                                                  trust_remote_code=model.trust_remote_code)
        self.vocab = from_hf_tokenizer(tokenizer, vocab_size=self.width)
        self.eos = np.array(sorted(i for i in self.vocab.eos_ids if i < self.width), dtype=np.int64)
        self._constraints: dict[str, Constraints] = {}
        self._parsed: BoundedCache[str, ToolDecArgs] = BoundedCache(PARSED_CACHE, sizer=lambda _: 1)
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tooldec-masks")
        self._job: Future[tuple[list[int], np.ndarray]] | None = None
        self._words = (self.width + 31) // 32
        self._stats = StepLog.from_env()

    def is_argmax_invariant(self) -> bool:
        """The masks change which token is most likely."""
        return False

    # -- main thread ---------------------------------------------------------------------------

    def _new_row(self, params: SamplingParams, prompt: list[int] | None, output: list[int]) -> _Row | None:
        value = (params.extra_args or {}).get(KEY)
        if value is None:
            return None
        stops = set(params.all_stop_token_ids)
        other = self.eos[~np.isin(self.eos, list(stops))] if stops & set(self.eos.tolist()) else self.eos[:0]
        return _Row(value, output, params.max_tokens, other)

    def update_state(self, batch_update: BatchUpdate | None) -> None:
        """Apply the batch changes, then start computing this step's masks on the worker."""
        if self.idle:
            return
        if self._stats is not None:
            self._stats.step_began()
        self._join()
        process_dict_updates(self.rows, batch_update, self._new_row)
        if self.rows:
            self._job = self._pool.submit(self._masks, sorted(self.rows.items()))

    def apply(self, logits: torch.Tensor) -> torch.Tensor:
        """Write ``-inf`` into the constrained rows wherever their mask forbids a token."""
        if not self.rows:
            return logits
        stats = self._stats
        if stats is None:
            return self._apply(logits, self._join())
        start = time.perf_counter()
        joined = self._join()
        waited = time.perf_counter() - start
        rows = len(self.rows)
        logits = self._apply(logits, joined)
        stats.applied(rows, time.perf_counter() - start, waited)
        return logits

    def _apply(self, logits: torch.Tensor, joined: tuple[list[int], np.ndarray] | None) -> torch.Tensor:
        indices, allowed = joined or self._pool.submit(self._masks, sorted(self.rows.items())).result()
        if not indices:
            return logits
        late = [i for i, row in enumerate(indices) if self.rows[row].pending]
        if late:  # async scheduling: vLLM has filled the sampled tokens in by now
            again = [(indices[i], self.rows[indices[i]]) for i in late]
            allowed[late] = self._pool.submit(self._masks, again, True).result()[1]
        width = min(logits.shape[-1], allowed.shape[-1])
        blocked = torch.from_numpy(~allowed[:, :width]).to(logits.device)
        rows = torch.tensor(indices, dtype=torch.long, device=logits.device)
        logits[rows, :width] = logits[rows, :width].masked_fill(blocked, float("-inf"))
        if logits.shape[-1] > width:
            logits[rows, width:] = float("-inf")
        return logits

    def _join(self) -> tuple[list[int], np.ndarray] | None:
        job, self._job = self._job, None
        return None if job is None else job.result()

    # -- worker thread -------------------------------------------------------------------------

    def _constraints_for(self, args: ToolDecArgs) -> Constraints:
        """One ``Constraints`` (vocabulary prepared once) per dialect and openers in use."""
        constraints = self._constraints.get(args.dialect_key)
        if constraints is None:
            constraints = self._constraints[args.dialect_key] = Constraints(self.vocab, args.make_dialect())
        return constraints

    def _args(self, raw: object) -> ToolDecArgs:
        """Parse a request's arguments; a list sent again (the same JSON text) is not parsed again."""
        if not isinstance(raw, str):
            return ToolDecArgs.parse(raw)
        return self._parsed.get_or_make(raw, lambda: ToolDecArgs.parse(raw))

    def _advance(self, row: _Row) -> None:
        """Create the row's cursor if new, and move it by the tokens vLLM sampled since."""
        row.pending = False
        if row.failed is not None:
            return
        if row.machine is None:
            try:
                args = self._args(row.raw)
                constraints = self._constraints_for(args)
                compiled = constraints.compile(args.tools, args.key)
                row.machine = constraints.machine(compiled, tool_choice=args.tool_choice,
                                                  parallel_tool_calls=args.parallel_tool_calls)
            except (ToolDecError, ValueError) as error:  # checked in validate_params; offline callers may skip it
                row.failed = f"tools refused: {error}"
                log.error("tooldec: %s", row.failed)
                return
            if row.max_tokens is not None:
                try:
                    row.machine.check_budget(row.max_tokens)
                except BudgetError as error:  # no token would be allowed: the call goes on unbudgeted, cut at max_tokens
                    log.warning("tooldec: %s; the call may be cut", error)
                    row.max_tokens = None
        output = row.output
        while row.consumed < len(output):
            token = output[row.consumed]
            if token == PLACEHOLDER:
                row.pending = True
                return
            if not row.machine.advance(token):
                row.failed = f"token {token} left the grammar after {row.consumed} tokens"
                log.error("tooldec: %s; the request is ended", row.failed)
                return
            row.consumed += 1

    def _masks(self, rows: list[tuple[int, _Row]], final: bool = False) -> tuple[list[int], np.ndarray]:
        """Move every cursor, then fill one bitmask for all rows; the allowed flags. ``final``: the
        last chance before sampling, so a row still waiting for its token (a processor loaded by
        entry point alone gets none under async scheduling) is ended, not left unconstrained."""
        start = time.perf_counter()
        bitmask = np.zeros((len(rows), self._words), dtype=np.int32)
        masked = [True] * len(rows)
        cursors: list[tuple[int, Machine]] = []
        budgets: list[int | None] = []
        for i, (_, row) in enumerate(rows):
            self._advance(row)
            if final and row.pending:
                row.failed = ("vLLM gave no sampled tokens (async scheduling: name the processor with "
                              "--logits-processors, or use --no-async-scheduling)")
                log.error("tooldec: %s; the request is ended", row.failed)
            if row.failed is not None or row.machine is None or row.pending or row.machine.is_done() \
                    or row.machine.advanced.turn_over:
                bitmask[i] = 0  # a failed or finished row ends (the client runs the calls); a pending one is redone in apply
                _set_bits(bitmask[i], self.eos)
                _clear_bits(bitmask[i], row.other_ends)
                continue
            cursors.append((i, row.machine))
            budgets.append(None if row.max_tokens is None else max(row.max_tokens - row.consumed, 1))
        if cursors:
            for (i, machine), forbids in zip(cursors, _fill(cursors, bitmask, budgets, rows)):
                other_ends = rows[i][1].other_ends
                # text before any call is left alone (an untouched row costs nothing); after a
                # call, an end that does not stop the request would be written to max_tokens
                masked[i] = forbids or (machine.advanced.calls_completed > 0 and other_ends.size > 0)
                if masked[i]:
                    _clear_bits(bitmask[i], other_ends)
        keep = [i for i in range(len(rows)) if final or masked[i] or rows[i][1].pending]  # free text: nothing to apply
        allowed = np.unpackbits(bitmask[keep].view(np.uint8), axis=-1, bitorder="little").astype(bool)
        if self._stats is not None:
            self._stats.add_work(time.perf_counter() - start)
        return [rows[i][0] for i in keep], allowed


def _fill(cursors: list[tuple[int, Machine]], bitmask: np.ndarray, budgets: list[int | None],
          rows: list[tuple[int, _Row]]) -> list[bool]:
    """Each cursor's mask into its row of ``bitmask``; whether it forbids anything. A row whose budget
    has fallen below its call's need (``check_budget`` before the first token keeps it from
    happening) goes on unbudgeted, as a row that failed that check does, instead of failing the batch."""
    out = []
    for (i, machine), budget in zip(cursors, budgets):
        try:
            out.append(machine.fill_bitmask(bitmask, i, budget))
        except BudgetError as error:
            log.warning("tooldec: %s; the call may be cut", error)
            rows[i][1].max_tokens = None
            out.append(machine.fill_bitmask(bitmask, i, None))
    return out


def _set_bits(row: np.ndarray, ids: np.ndarray) -> None:
    """Allow ``ids`` in one int32 bitmask row."""
    words = row.view(np.uint32)
    for token in ids.tolist():
        words[token >> 5] |= np.uint32(1 << (token & 31))


def _clear_bits(row: np.ndarray, ids: np.ndarray) -> None:
    """Forbid ``ids`` in one int32 bitmask row."""
    words = row.view(np.uint32)
    for token in ids.tolist():
        words[token >> 5] &= np.uint32(~(1 << (token & 31)) & 0xFFFFFFFF)
