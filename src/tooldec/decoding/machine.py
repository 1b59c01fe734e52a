"""The cursor one sequence moves through the grammar: the matcher a backend talks to."""

from __future__ import annotations

import enum
from typing import Literal

import numpy as np

from ..errors import ToolNotFoundError
from .grammar import MAIN, Grammar, Mask, Position

__all__ = ["Machine", "Mode", "ToolChoice"]

ToolChoice = Literal["auto", "required", "none"] | str
NAME_SLACK = 256
"""Tokens of headroom past a name position's own shortest completion before budgets are checked
token by token there (a token can commit to a longer name whose arguments need more). With 24,
one random walk in 8,000 committed to a tool it could not finish in time."""


class Mode(enum.Enum):
    TEXT = "text"
    """Free text: the whole vocabulary, less what ``tool_choice`` forbids."""
    TOOL = "tool"
    """Inside a call (or before one that must come first): only tokens that keep it valid."""
    DONE = "done"
    """An end-of-sequence token was accepted."""


class Machine:
    """One sequence's position in a :class:`Grammar`.

    Args:
        grammar: the tool set, dialect and vocabulary, shared by all machines.
        tool_choice: ``"auto"`` (text or calls), ``"required"`` (a call comes first),
            ``"none"`` (the trigger is masked) or a tool name (that tool is called first).
        parallel_tool_calls: whether more than one call may be made in one turn.
        max_calls: most calls in one turn (``None``: no limit).

    Examples:
        >>> from tooldec.tokens import Vocabulary
        >>> from tooldec.tools import ToolSet
        >>> from tooldec.dialects import Hermes
        >>> vocab = Vocabulary.from_tokens([bytes([b]) for b in range(256)] + [b'{"name": "', b"add"])
        >>> def add(a: int, b: int) -> int:
        ...     '''Add two numbers.'''
        ...     return a + b
        >>> m = Machine(Grammar(ToolSet([add]), vocab, Hermes()), tool_choice="required")
        >>> for byte in b'<tool_call>\\n{"name": "':
        ...     assert m.advance(byte)
        >>> [vocab.token_bytes[i] for i in m.allowed_token_ids()]
        [b'a', b'add']
        >>> m.advance(257), m.mode
        (True, <Mode.TOOL: 'tool'>)
    """

    def __init__(
        self,
        grammar: Grammar,
        *,
        tool_choice: ToolChoice = "auto",
        parallel_tool_calls: bool = True,
        max_calls: int | None = None,
    ) -> None:
        if tool_choice not in ("auto", "required", "none") and tool_choice not in grammar.tools:
            raise ToolNotFoundError(f"tool_choice {tool_choice!r} is neither auto/required/none nor a tool name")
        if grammar.dialect.trigger is None and tool_choice == "auto":
            raise ValueError(
                f"dialect {grammar.dialect.name!r} has no trigger, so a call can only open the output: "
                "use tool_choice='required' or a tool name"
            )
        if max_calls is not None and max_calls < 0:
            raise ValueError(f"max_calls must be >= 0, got {max_calls}")
        self.grammar = grammar
        self.tool_choice = tool_choice
        self.parallel_tool_calls = parallel_tool_calls
        self.max_calls = max_calls
        named = tool_choice not in ("auto", "required", "none")
        self._pos: Position = ("start", tool_choice if named else MAIN) if tool_choice == "required" or named else ("text", 0)
        self._done = False
        self.calls_completed = 0
        self.call_just_closed = False
        self._history: list[tuple[Position, bool, int, bool, int]] = []
        self._text = bytearray()

    # -- state --------------------------------------------------------------------------------

    @property
    def mode(self) -> Mode:
        if self._done:
            return Mode.DONE
        return Mode.TEXT if self._pos[0] == "text" else Mode.TOOL

    @property
    def position(self) -> Position:
        return self._pos

    @property
    def text(self) -> bytes:
        """The bytes consumed so far (special tokens without bytes leave nothing)."""
        return bytes(self._text)

    def is_accepting(self) -> bool:
        """Whether the output could end here (an end-of-sequence token is allowed)."""
        return not self._done and self.grammar.is_accepting(self._pos)

    def is_done(self) -> bool:
        return self._done

    def shortest_completion(self) -> int:
        """Fewest bytes (so at most that many tokens) that finish the current call; 0 outside one."""
        return self.grammar.distance(self._pos, self._flags()[1])

    def _flags(self) -> tuple[bool, bool]:
        """(a call may start now, another may follow the current one)."""
        if self.tool_choice == "none":
            return False, False
        limit = self.max_calls if self.max_calls is not None else 1 << 30
        calls = self.calls_completed
        start_ok = calls < limit and (self.parallel_tool_calls or calls == 0)
        follow_ok = self.parallel_tool_calls and calls + 1 < limit
        return start_ok, follow_ok

    # -- masks --------------------------------------------------------------------------------

    def _mask(self, budget: int | None) -> tuple[Mask, np.ndarray | None]:
        grammar, pos = self.grammar, self._pos
        start_ok, follow_ok = self._flags()
        if budget is not None and pos[0] == "text" and start_ok:
            # never open a call that cannot be finished within the budget (bytes bound tokens,
            # so the token count is only needed when the bytes do not fit)
            start = ("start", MAIN)
            if budget - 1 < grammar.distance(start, follow_ok):
                need = grammar.completions.tokens(start, follow_ok) + (0 if grammar.trigger_is_text else 1)
                if budget < need:
                    start_ok = False
        mask = grammar.mask(pos, start_ok, follow_ok)
        if budget is None or pos[0] == "text":
            return mask, None
        if pos[0] == "tail":
            tight = budget - 1 < mask.max_after
        else:
            tight = budget - 1 < grammar.completions.tokens(pos, follow_ok) + NAME_SLACK
        if not tight:
            return mask, None
        return mask, grammar.completions.within(pos, mask, budget, start_ok, follow_ok)

    def allowed_token_ids(self, budget: int | None = None) -> np.ndarray:
        """Sorted ids of the tokens allowed next.

        Args:
            budget: tokens the caller may still generate, this one included. When it is tight,
                only tokens after which the call can still close in time are allowed.
        """
        if self._done:
            return np.empty(0, dtype=np.int32)
        mask, filtered = self._mask(budget)
        return mask.ids if filtered is None else filtered

    def fill_bitmask(self, bitmask: np.ndarray, row: int = 0, budget: int | None = None) -> bool:
        """Write the allowed set into ``bitmask[row]`` (int32 words, bit i = token 32*w+i).

        Returns:
            Whether any token of the vocabulary is masked out.
        """
        words = bitmask.shape[-1]
        if self._done:
            bitmask[row] = 0
            return True
        if budget is None:  # the hot path: one cached mask, one copy
            start_ok, follow_ok = self._flags()
            mask = self.grammar.mask(self._pos, start_ok, follow_ok)
        else:
            mask, filtered = self._mask(budget)
            if filtered is not None:
                mask = Mask.from_ids(filtered, words)
        bitmask[row] = mask.words(words)
        return mask.count < self.grammar.vocab.size

    # -- moving -------------------------------------------------------------------------------

    def advance(self, token_id: int) -> bool:
        """Consume one token. Returns ``False`` (and changes nothing) if it is not allowed."""
        if self._done:
            return False
        grammar, pos = self.grammar, self._pos
        start_ok, follow_ok = self._flags()
        tid = int(token_id)
        if tid in grammar.vocab.eos_ids and not (0 <= tid < grammar.vocab.size and grammar.vocab.token_bytes[tid]):
            if not grammar.is_accepting(pos):
                return False
            self._push()
            self._done = True
            self.call_just_closed = False
            return True
        data = grammar.vocab.token_bytes[tid] if 0 <= tid < grammar.vocab.size else None
        closed = 0
        if data is None:
            if tid not in grammar.vocab.special:
                return False
            is_trigger = tid in grammar.trigger_ids
            if pos[0] == "text" and is_trigger and start_ok:
                new: Position | None = grammar.call_start(MAIN)
            elif pos[0] == "start" and is_trigger:
                new = grammar.call_start(pos[1])
            elif pos[0] == "text" and not is_trigger:
                new = pos
            else:
                return False
        else:
            new, closed = grammar.walk_counting(pos, data, start_ok, follow_ok)
            if new is None:
                return False
        self._push()
        self._pos = new
        self._text += data or b""
        self.calls_completed += closed
        self.call_just_closed = closed > 0
        return True

    def _push(self) -> None:
        self._history.append((self._pos, self._done, self.calls_completed, self.call_just_closed, len(self._text)))

    def rollback(self, n: int = 1) -> None:
        """Undo the last ``n`` accepted tokens."""
        if n > len(self._history):
            raise ValueError(f"cannot roll back {n} tokens, only {len(self._history)} were accepted")
        for _ in range(n):
            self._pos, self._done, self.calls_completed, self.call_just_closed, length = self._history.pop()
            del self._text[length:]

    def fork(self) -> Machine:
        """An independent copy at the same position (for beam search or speculation)."""
        twin = Machine.__new__(Machine)
        twin.__dict__.update(self.__dict__)
        twin._history = list(self._history)
        twin._text = bytearray(self._text)
        return twin
