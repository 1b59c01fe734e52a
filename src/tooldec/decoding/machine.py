"""The cursor one sequence moves through a snapshot: the matcher a backend talks to.

A :class:`Machine` belongs to one sequence (one thread at a time); the :class:`Grammar` it reads
is immutable and may be shared by any number of machines and threads.
"""

from __future__ import annotations

import copy
import enum
import threading
import weakref
from collections.abc import Sequence
from typing import Literal, cast

import numpy as np

from ..automata.dfa import SINK
from ..errors import BudgetError, ToolNotFoundError
from .budget import NOT_AT_HAND, known_within, need, shortest, within
from .forced import forced_bytes
from .grammar import CompiledTail, Grammar
from .masking import FAR, goes_on_from
from .masks import Mask
from .opener_bounds import upper
from .openers import CommitKind
from .positions import Open, Position, Tail, Text, Think

__all__ = ["Advanced", "Machine", "Mode", "ToolChoice", "fill_bitmasks"]

ToolChoice = Literal["auto", "required", "none"] | str

Lists = tuple[np.ndarray | None, np.ndarray | None]
"""``(allowed, refused)``: what a sampler reads of a mask (``Mask.pick_lists``)."""

MOVES_KEPT = 16
"""Most moves a :class:`_Step` keeps: one per position, more where a string's content repeats a state."""

_MOVES = threading.Lock()
"""Held while a record's moves are written, so no reader sees half of one."""


class _Step:
    """A loop's record of one position of one snapshot: its sampler lists, the budgets that leave
    them whole, and where tokens taken from it led, so a position seen again follows the kept move
    instead of finding both anew (30-45 µs a token with swept CPU caches:
    ``python benchmarks/cold_replay.py --model qwen --sweep-mb 64 --phases``).

    Shared by every machine of the snapshot on any thread: ``lists``, ``fits_from`` and ``flags``
    never change; moves are written under ``_MOVES``, the first with ``token`` last (a reader that
    sees the token sees the rest); ``next`` is one reference, replaced whole.
    """

    __slots__ = ("lists", "width", "fits_from", "flags", "token", "to", "closed", "next", "more", "nbytes",
                 "__weakref__")

    def __init__(self, lists: Lists, width: int, fits_from: int, flags: tuple[bool, bool]) -> None:
        self.lists = lists
        self.width = width
        self.fits_from = fits_from  # the least budget known to leave the mask whole
        self.flags = flags  # (start_ok, follow_ok), part of its key
        self.token = -1  # the first token taken from here (-1: none yet)
        self.to: Position | None = None  # the position after ``token``
        self.closed = 0  # calls ``token`` closed
        self.next: weakref.ref[_Step] | None = None  # ``to``'s record, once a machine made or found it
        self.more: dict[int, tuple[Position, int]] | None = None  # later tokens: (position after, calls closed)
        allowed, refused = lists
        self.nbytes = 900 + 200 * MOVES_KEPT + (0 if allowed is None else allowed.nbytes) + (
            0 if refused is None else refused.nbytes)
        """What the record, its key, its moves and its link take (``sys.getsizeof``): the cache's bound counts it."""

    def keep_move(self, token: int, to: Position, closed: int) -> bool:
        """Keep ``token``'s move if there is room; whether it is the first (the linked one)."""
        with _MOVES:
            if self.token < 0:
                self.to, self.closed = to, closed
                self.token = token
            elif self.token != token:
                more = self.more
                if more is None:
                    more = self.more = {}
                if len(more) < MOVES_KEPT - 1:
                    more[token] = (to, closed)
        return self.token == token


class Mode(enum.Enum):
    TEXT = "text"
    """Free text: the whole vocabulary, less what ``tool_choice`` forbids."""
    TOOL = "tool"
    """Inside a call (or before one that must come first): only tokens that keep it valid."""
    REASONING = "reasoning"
    """Inside a reasoning section: free text in which no call opens, until the section closes."""
    DONE = "done"
    """An end-of-sequence token was accepted."""


class Machine:
    """One sequence's position in a :class:`Grammar`: its masks, and the tokens that move it.

    Its ten public methods are all a loop that asks for a mask every step needs; a sampler loop
    reads the rest through ``machine.advanced`` (:class:`Advanced`). Belongs to one sequence.

    Args:
        grammar: The compiled inventory (shared by all machines).
        tool_choice: ``"auto"``, ``"required"`` (a call comes first), ``"none"`` (no call may
            open) or a tool name (that tool is called first).
        parallel_tool_calls: Whether more than one call may be made in one turn.
        max_calls: Most calls in one turn (``None``: no limit).
        max_reasoning_tokens: Most tokens a reasoning section may take, its close included: past
            it only the close is allowed (with a budget, room is kept for a call that must follow).

    Raises:
        ToolNotFoundError: ``tool_choice`` names no tool.
        ValueError: ``auto`` with a dialect whose openers in use can only open the output, or a negative
            ``max_calls``.

    Examples:
        >>> from tooldec.tokens import Vocabulary
        >>> from tooldec.tools import ToolSet
        >>> from tooldec.dialects import Hermes
        >>> vocab = Vocabulary.from_tokens([bytes([b]) for b in range(256)] + [b'{"name": "', b"add"])
        >>> def add(a: int, b: int) -> int:
        ...     '''Add two numbers.'''
        ...     return a + b
        >>> m = Machine(Grammar(ToolSet([add]), vocab, Hermes(openers=["tag"])), tool_choice="required")
        >>> m.accept_string(b'<tool_call>\\n{"name": "')
        True
        >>> [vocab.token_bytes[i] for i in m.allowed_token_ids()]
        [b'a', b'add']
        >>> m.advance(257), m.advanced.mode
        (True, <Mode.TOOL: 'tool'>)
    """

    def __init__(self, grammar: Grammar, *, tool_choice: ToolChoice = "auto", parallel_tool_calls: bool = True,
                 max_calls: int | None = None, max_reasoning_tokens: int | None = None) -> None:
        if tool_choice not in ("auto", "required", "none") and tool_choice not in grammar.tools:
            raise ToolNotFoundError(f"tool_choice {tool_choice!r} is neither auto/required/none nor a tool name")
        if tool_choice == "auto" and not grammar.dialect.opens_in_text:
            raise ValueError(
                f"{grammar.dialect!r} has no opener that may follow text, so a call can only open the output: "
                "use tool_choice='required' or a tool name, or an opener that may follow text (e.g. "
                "Pythonic(openers=['call']))")
        if max_calls is not None and max_calls < 0:
            raise ValueError(f"max_calls must be >= 0, got {max_calls}")
        if max_reasoning_tokens is not None and max_reasoning_tokens < 0:
            raise ValueError(f"max_reasoning_tokens must be >= 0, got {max_reasoning_tokens}")
        self._max_reasoning_tokens = max_reasoning_tokens
        self._grammar = grammar
        self._tool_choice = tool_choice
        self._parallel_tool_calls = parallel_tool_calls
        self._max_calls = max_calls
        self._eos = grammar.vocab.eos_ids
        self._call_ends_output = grammar.dialect.call_ends_output
        self._token_bytes = grammar.vocab.token_bytes
        self.advanced = Advanced(self)
        """Everything a sampler loop reads beyond these ten methods."""
        self.reset()

    def reset(self) -> None:
        """Back to the start, as if just made."""
        self._pos: Position = self._grammar.start(self._tool_choice)
        self._done = False
        self._calls_completed = 0
        self._call_just_closed = False
        self._reasoning_tokens = 0
        self._history: list[tuple[Position, bool, int, bool, int, int]] = []
        self._text = bytearray()
        self._step: _Step | None = None  # the record of this position, once a loop asked for its lists
        self._came: _Step | None = None  # the record whose kept move led here

    def is_done(self) -> bool:
        """Whether an end-of-sequence token was accepted."""
        return self._done

    def _flags(self) -> tuple[bool, bool]:
        """(a call may start now, another may follow the current one)."""
        if self._tool_choice == "none":
            return False, False
        limit = self._max_calls if self._max_calls is not None else 1 << 30
        calls = self._calls_completed
        start_ok = calls < limit and (self._parallel_tool_calls or calls == 0)
        follow_ok = self._parallel_tool_calls and calls + 1 < limit
        return start_ok, follow_ok

    def min_tokens(self) -> int:
        """Tokens always enough to finish the current call (0 outside one)."""
        return need(self._grammar, self._pos, self._flags()[1])

    def check_budget(self, budget: int) -> None:
        """Refuse, before decoding starts, a budget in which the required call cannot close.

        Raises:
            BudgetError: A call must come first and needs more than ``budget`` tokens.
        """
        if isinstance(self._pos, Open) or (isinstance(self._pos, Think) and self._pos.forced):
            needed = self.min_tokens()
            if needed > budget:
                raise BudgetError(
                    f"the shortest call needs {needed} tokens but the budget is {budget}: raise the token limit "
                    f"(max_new_tokens, max_tokens) to at least {needed}, or let the model answer without a call (tool_choice='auto')")

    # -- masks --------------------------------------------------------------------------------

    def _capped(self, budget: int | None) -> int | None:
        """``budget``, capped in a reasoning section by ``max_reasoning_tokens`` (never below what
        its close and what must follow need)."""
        pos, most = self._pos, self._max_reasoning_tokens
        if most is None or type(pos) is not Think:
            return budget
        grammar, follow_ok = self._grammar, self._flags()[1]
        after = need(grammar, grammar.after_think(pos), follow_ok)
        cap = max(most - self._reasoning_tokens, need(grammar, pos, follow_ok) - after) + after
        return cap if budget is None else min(budget, cap)

    def _mask(self, budget: int | None, flags: tuple[bool, bool] | None = None) -> tuple[Mask, Mask | None]:
        grammar, pos = self._grammar, self._pos
        budget = self._capped(budget)
        start_ok, follow_ok = self._flags() if flags is None else flags
        mask = grammar.mask(pos, start_ok, follow_ok)
        if budget is None:
            return mask, None
        # this token at least: asking for a mask means one more comes
        return mask, self._fitting(within(grammar, pos, mask, max(budget, 1), start_ok, follow_ok), budget)

    def _fitting(self, filtered: Mask | None, budget: int) -> Mask | None:
        """The budget's cut; ``BudgetError`` where it leaves no token (it would fail a sampler later)."""
        if filtered is not None and not filtered.count:
            needed = self.min_tokens()
            raise BudgetError(
                f"the rest of the call needs {needed} tokens but the budget is {budget}, so no token is allowed: "
                "check_budget(max_tokens) before decoding refuses such a budget, and a loop that passes the "
                "tokens it has left (this one included) never goes below the need")
        return filtered

    def _allowed(self, budget: int | None) -> Mask:
        if self._done:
            return Mask.from_ids(np.empty(0, dtype=np.int64), self._grammar.compiler.index.words)
        mask, filtered = self._mask(budget)
        return mask if filtered is None else filtered

    def allowed_token_ids(self, budget: int | None = None) -> np.ndarray:
        """Sorted ids of the tokens allowed next.

        Args:
            budget: Tokens the caller may still generate, this one included. Only tokens after
                which the call can still close within the rest are allowed.

        Raises:
            BudgetError: ``budget`` is below :meth:`min_tokens`, so no token could be allowed
                (as in :meth:`fill_bitmask` and every mask of :class:`Advanced`).
        """
        return self._allowed(budget).ids

    def _known(self, budget: int | None, flags: tuple[bool, bool] | None = None) -> tuple[Mask, Mask | None] | None:
        """:meth:`_mask`'s answer where it is at hand, else ``None``."""
        grammar, pos = self._grammar, self._pos
        budget = self._capped(budget)
        start_ok, follow_ok = self._flags() if flags is None else flags
        mask = grammar.known_mask(pos, start_ok, follow_ok)
        if mask is None or budget is None:
            return None if mask is None else (mask, None)
        filtered = known_within(grammar, pos, mask, max(budget, 1), start_ok, follow_ok)
        if filtered is NOT_AT_HAND:
            return None
        return mask, self._fitting(filtered, budget) if isinstance(filtered, Mask) else None

    def _find_step(self, flags: tuple[bool, bool]) -> _Step | None:
        """This position's record: through the kept move that led here, else from the cache."""
        step = self._step
        if step is not None:
            return step
        came = self._came
        if came is not None:
            link = came.next
            if link is None:  # the move was made just now: the position after it is new to this record, most likely to all
                return None
            step = link()
            if step is not None and step.flags == flags:
                self._step = step
                return step
        step = cast("_Step | None", self._grammar.compiler.masks.get(("step", self._grammar.serial, self._pos, *flags)))
        if step is not None:
            self._arrive(step)
        return step

    def _arrive(self, step: _Step) -> None:
        self._step = step
        if self._came is not None:
            self._came.next = weakref.ref(step)

    def _keep_lists(self, flags: tuple[bool, bool], mask: Mask, filtered: Mask | None, budget: int, width: int) -> Lists:
        """The sampler's lists of ``filtered`` or else ``mask``, recorded where the budget took nothing."""
        if filtered is not None:
            return filtered.pick_lists(width)
        lists = mask.pick_lists(width)
        if self._step is None:  # one found here already stays: the cache keeps the first under its key
            step = _Step(lists, width, min(max(budget, 1), mask.max_after + 1), flags)
            key = ("step", self._grammar.serial, self._pos, *flags)
            self._arrive(cast("_Step", self._grammar.compiler.masks.put(key, step)))  # type: ignore[arg-type]
        return lists

    def fill_bitmask(self, bitmask: np.ndarray, row: int = 0, budget: int | None = None) -> bool:
        """Write the allowed set into ``bitmask[row]`` (int32 words, bit i = token 32*w+i), or into
        ``bitmask`` itself when it is one row.

        Returns:
            Whether any token of the vocabulary is masked out.

        Raises:
            BudgetError: ``budget`` is below :meth:`min_tokens` (see :meth:`allowed_token_ids`);
                ``bitmask`` is left as it was.
        """
        target = bitmask if bitmask.ndim == 1 else bitmask[row]
        if self._done:
            target[:] = 0
            return True
        mask = self._allowed(budget)
        mask.write(target)
        return mask.count < self._grammar.vocab.size

    # -- moving -------------------------------------------------------------------------------

    def advance(self, token_id: int) -> bool:
        """Consume one token. Returns ``False`` (and changes nothing) if it is not allowed."""
        if self._done:
            return False
        tid = int(token_id)
        step = self._step
        if step is not None:
            if step.token == tid:
                assert step.to is not None  # written before the token
                self._move(step.to, self._token_bytes[tid], step.closed, step)
                return True
            more = step.more
            moved = None if more is None else more.get(tid)
            if moved is not None:
                self._move(moved[0], self._token_bytes[tid], moved[1])
                return True
        grammar, pos = self._grammar, self._pos
        start_ok, follow_ok = self._flags()
        vocab = grammar.vocab
        data = vocab.token_bytes[tid] if 0 <= tid < vocab.size else None
        if data is None:
            if tid in self._eos:
                if not grammar.is_accepting(pos):
                    return False
                self._move(pos, None, 0)
                self._done = True
                return True
            if tid not in vocab.special:
                return False
            new = grammar.after_special(pos, tid, start_ok)
            if new is None:
                return False
            closed = 0
        else:
            found, closed = grammar.walk(pos, data, start_ok, follow_ok)
            if found is None:
                return False
            new = found
        came = step if step is not None and step.keep_move(tid, new, closed) else None
        self._move(new, data, closed, came)
        return True

    def _move(self, new: Position, data: bytes | None, closed: int, came: _Step | None = None) -> None:
        """Step to ``new`` after ``data``, keeping where it was for :meth:`rollback`."""
        old = self._pos
        self._history.append((old, self._done, self._calls_completed, self._call_just_closed, len(self._text),
                              self._reasoning_tokens))
        if type(new) is Think:
            self._reasoning_tokens = self._reasoning_tokens + 1 if type(old) is Think else 0
        elif type(old) is Think:
            self._reasoning_tokens += 1  # the token that closed it
        self._pos = new
        self._step = None
        self._came = came
        if data:
            self._text += data
        self._calls_completed += closed
        self._call_just_closed = closed > 0
        if closed and self._call_ends_output:  # the call's last token ended the output (gpt-oss's <|call|>)
            self._done = True

    def accept_string(self, data: str | bytes) -> bool:
        """Consume text without token ids (a forced prefix). ``False`` (and nothing changes) if it
        leaves the language; one :meth:`rollback` undoes it."""
        raw = data.encode() if isinstance(data, str) else bytes(data)
        if self._done:
            return False
        start_ok, follow_ok = self._flags()
        found, closed = self._grammar.walk(self._pos, raw, start_ok, follow_ok)
        if found is None:
            return False
        self._move(found, raw, closed)
        return True

    def rollback(self, n: int = 1) -> None:
        """Undo the last ``n`` accepted tokens (or strings)."""
        if n > len(self._history):
            raise ValueError(f"cannot roll back {n} tokens, only {len(self._history)} were accepted")
        for _ in range(n):
            (self._pos, self._done, self._calls_completed, self._call_just_closed, length,
             self._reasoning_tokens) = self._history.pop()
            del self._text[length:]
        self._step = self._came = None

    def fork(self) -> Machine:
        """An independent copy at the same position (beam search, speculation)."""
        twin = copy.copy(self)  # the grammar and caches shared; the history and text copied below
        twin._history = list(self._history)
        twin._text = bytearray(self._text)
        twin.advanced = Advanced(twin)
        return twin


class Advanced:
    """What a sampler loop reads of a :class:`Machine` beyond its ten methods (``machine.advanced``):
    a view of its machine, with no state of its own."""

    __slots__ = ("_machine",)

    def __init__(self, machine: Machine) -> None:
        self._machine = machine

    # -- where the cursor is ------------------------------------------------------------------

    @property
    def grammar(self) -> Grammar:
        """The snapshot the cursor walks."""
        return self._machine._grammar

    @property
    def position(self) -> Position:
        return self._machine._pos

    @property
    def mode(self) -> Mode:
        m = self._machine
        if m._done:
            return Mode.DONE
        if isinstance(m._pos, Think):
            return Mode.REASONING
        return Mode.TEXT if isinstance(m._pos, Text) else Mode.TOOL

    @property
    def text(self) -> bytes:
        """The bytes consumed so far (special tokens without bytes leave nothing)."""
        return bytes(self._machine._text)

    @property
    def calls_completed(self) -> int:
        return self._machine._calls_completed

    @property
    def call_just_closed(self) -> bool:
        """Whether the last token (or string) closed a call."""
        return self._machine._call_just_closed

    @property
    def reasoning_tokens(self) -> int:
        """Tokens taken inside the current (or last) reasoning section."""
        return self._machine._reasoning_tokens

    @property
    def turn_over(self) -> bool:
        """In text after the last call allowed: where a server whose client runs the tools ends the message."""
        m = self._machine
        if m._done or m._calls_completed == 0:
            return False
        return isinstance(m._pos, Text) and not m._flags()[0]

    def is_accepting(self) -> bool:
        """Whether the output may end here (no call is open), or has ended."""
        m = self._machine
        return m._done or m._grammar.is_accepting(m._pos)

    def shortest_completion(self) -> int:
        """Fewest bytes that finish the current call; 0 outside one."""
        m = self._machine
        return len(shortest(m._grammar, m._pos, m._flags()[1])[1])

    def forced_bytes(self, limit: int = 256) -> bytes:
        """The bytes the grammar forces next (at most ``limit``), up to a choice, a closed call or
        free text: a loop evaluates their tokens in one batch (:mod:`tooldec.decoding.forced`).

        Examples:
            >>> from tooldec.tokens import Vocabulary
            >>> from tooldec.tools import ToolSet
            >>> from tooldec.dialects import Hermes
            >>> vocab = Vocabulary.from_tokens([bytes([b]) for b in range(256)])
            >>> def add(a: int, b: int) -> int:
            ...     '''Add two numbers.'''
            ...     return a + b
            >>> m = Machine(Grammar(ToolSet([add]), vocab, Hermes(openers=["tag"])), tool_choice="required")
            >>> m.advanced.forced_bytes()
            b'<tool_call>\\n{"name": "add", "arguments": {"a": '
        """
        m = self._machine
        if m._done:
            return b""
        start_ok, follow_ok = m._flags()
        return forced_bytes(m._grammar, m._pos, start_ok, follow_ok, limit)[0]

    # -- masks as a sampler reads them ---------------------------------------------------------

    def allowed(self, budget: int | None = None) -> Mask:
        """The tokens allowed next (see :meth:`Machine.allowed_token_ids`, and its ``BudgetError``,
        which every mask here shares) as packed bits, listed only on demand: a sampler reads
        ``Mask.pick_lists``, the refused ids where they are the fewer."""
        return self._machine._allowed(budget)

    def known(self, budget: int | None = None) -> Mask | None:
        """:meth:`allowed` if it is cached, else ``None``: nothing is computed, so a loop can ask on
        its own thread and hand only the rest to a worker."""
        m = self._machine
        found = None if m._done else m._known(budget)
        if found is None:
            return None
        mask, filtered = found
        return mask if filtered is None else filtered

    def known_lists(self, budget: int, width: int) -> Lists | None:
        """``allowed(budget).pick_lists(width)`` if it is at hand (see :meth:`known`), else ``None``."""
        m = self._machine
        if m._done:
            return None
        capped = m._capped(budget)
        budget = budget if capped is None else capped
        flags = m._flags()
        step = m._find_step(flags)
        if step is not None and budget >= step.fits_from and step.width == width:
            return step.lists
        known = m._known(budget, flags)
        return None if known is None else m._keep_lists(flags, *known, budget, width)

    def lists(self, budget: int, width: int) -> Lists:
        """``allowed(budget).pick_lists(width)``, kept for the next loop at this position when the
        budget leaves the mask whole."""
        m = self._machine
        if m._done:
            return m._allowed(budget).pick_lists(width)
        capped = m._capped(budget)
        budget = budget if capped is None else capped
        flags = m._flags()
        return m._keep_lists(flags, *m._mask(budget, flags), budget, width)

    # -- the model's own pick -----------------------------------------------------------------

    def advance_within(self, token_id: int, budget: int | None = None) -> bool:
        """:meth:`Machine.advance` if ``token_id`` is among :meth:`allowed` under ``budget``, decided
        without making the mask; otherwise ``False``, and nothing changes. Masks of a new tool list
        were most of a cold token's cost (``python benchmarks/cold_replay.py --sweep-mb 64 --check-first``)."""
        m = self._machine
        tid = int(token_id)
        grammar, token_bytes = m._grammar, m._token_bytes
        budget = m._capped(budget)
        data = token_bytes[tid] if 0 <= tid < len(token_bytes) else None
        if budget is None or data is None or m._done or m._step is not None:  # the general way
            follow_ok = m._flags()[1]
            if not m.advance(tid):
                return False
            if budget is None or m._done or _fits(grammar, m._pos, follow_ok, max(budget, 1) - 1):
                return True
            m.rollback()
            return False
        pos = m._pos  # the two common kinds first, each in one compiled walk (a cold Python call costs µs)
        if type(pos) is Text:  # free text that opens no call: nothing to judge
            state, _, exited = grammar.openers.search.walk_classes(pos.state, data)
            if not exited:
                m._move(Text(state), data, 0)
                return True
        elif type(pos) is Tail and not pos.counts:  # inside a call, no counter counted
            tail = grammar.tail(pos.tool, pos.form, pos.chained)
            state = tail.dfa.walk_inside(pos.state, data)
            if state == SINK:
                return False
            if state > 0:
                slack = max(budget, 1) - 1
                inside = Tail(pos.form, pos.tool, pos.chained, state)
                if _tail_bound(tail, state) > slack and need(grammar, inside, m._flags()[1]) > slack:
                    return False
                m._move(inside, data, 0)
                return True
        start_ok, follow_ok = m._flags()  # a token with bytes and no record: walked and judged before the move
        new, closed = grammar.walk(m._pos, data, start_ok, follow_ok)
        if new is None or not _fits(grammar, new, follow_ok, max(budget, 1) - 1):
            return False
        m._move(new, data, closed)
        return True

    @property
    def refuses(self) -> bool:
        """Whether free text refuses anything here (``Dialect.refusals``); else :meth:`refusal` is always ``None``."""
        return bool(self._machine._grammar.openers.refuses)

    def refusal(self, token_id: int) -> str | None:
        """The name of the refused text (``Dialect.refusals``) that ``token_id`` would complete
        here, or ``None``: so a trace shows a model that tried to write a tool result."""
        m = self._machine
        pos = m._pos
        if type(pos) is not Text or m._done:
            return None
        openers = m._grammar.openers
        tid = int(token_id)
        if tid in openers.refused_specials:
            return openers.refused_specials[tid]
        data = m._token_bytes[tid] if 0 <= tid < len(m._token_bytes) else None
        if not data:
            return None
        _, _, commit = openers.walk_text(pos.state, data)
        info = openers.commits[commit] if commit >= 0 else None
        return info.label if info is not None and info.kind is CommitKind.REFUSED else None


def _fits(grammar: Grammar, pos: Position, follow_ok: bool, slack: int) -> bool:
    """Whether the call can close from ``pos`` within ``slack`` tokens: a byte bound, else the need."""
    if isinstance(pos, Text):
        return True
    if isinstance(pos, Tail):
        bound = _tail_bound(grammar.tail(pos.tool, pos.form, pos.chained), pos.state)
    else:
        bound = upper(grammar, pos, follow_ok)
    return bound <= slack or need(grammar, pos, follow_ok) <= slack


def _tail_bound(tail: CompiledTail, state: int) -> int:
    """The bytes left after a tail state, as a tail mask's ``max_after`` counts them."""
    return FAR if tail.next_call and goes_on_from(tail.dfa, state) else int(tail.dfa.arrays.dist[state])


def fill_bitmasks(machines: Sequence[Machine | None], bitmask: np.ndarray,
                  budgets: Sequence[int | None] | None = None) -> np.ndarray:
    """Fill one bitmask row per machine (``None`` rows are left allowing everything).

    Args:
        machines: One per row of ``bitmask`` (``(len(machines), words)`` int32).
        bitmask: Written in place.
        budgets: Tokens left per row (``None``: no budget).

    Returns:
        Per row, whether anything is masked (bool array).
    """
    masked = np.zeros(len(machines), dtype=bool)
    for row, machine in enumerate(machines):
        if machine is None:
            bitmask[row] = -1
            continue
        masked[row] = machine.fill_bitmask(bitmask, row, None if budgets is None else budgets[row])
    return masked
