"""Token budgets: which tokens still let the call close in time (invariant 4, "always closes").

The shortest way to finish a call from a position is a concrete byte string (follow the
automaton's shortest path). Cutting it into the longest vocabulary tokens gives a number of
tokens that is achievable, since every piece is a prefix of a valid continuation, so it is a safe
bound on the tokens still needed: a token is allowed when the call can close after it within the
budget left. Bytes would be safe too, but far too cautious (a 60-byte call is ~20 tokens).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..errors import TokenizerError
from ..tools.trie import ROOT

if TYPE_CHECKING:
    from .grammar import Grammar, Mask, Position

__all__ = ["Completions"]


class Completions:
    """Shortest completions of a grammar's positions, in bytes and in tokens (memoised)."""

    def __init__(self, grammar: Grammar) -> None:
        self.grammar = grammar
        self._text: dict[tuple[object, ...], bytes] = {}
        self._tokens: dict[bytes, int] = {}

    def text(self, pos: Position, follow_ok: bool) -> bytes:
        """The shortest bytes that finish the call from ``pos`` (empty outside a call)."""
        key = (pos, follow_ok)
        found = self._text.get(key)
        if found is None:
            found = self._text[key] = self._build(pos, follow_ok)
        return found

    def _build(self, pos: Position, follow_ok: bool) -> bytes:
        g = self.grammar
        kind = pos[0]
        if kind == "text":
            return b""
        if kind == "start":  # a trigger that is a special token is counted by the caller
            literal = g._start_literal()
            return (g.dialect.head if literal is None else literal) + self.text(("name", pos[1], b"", ROOT), follow_ok)
        if kind == "name":
            _, key, lit, node = pos
            _, name = g.best_name(pos, follow_ok)
            rest = name.encode()[g.trie(key).depth(node) :]
            dfa = g.tail(name, follow_ok)
            return lit + rest + self.text(("tail", key, name, follow_ok, dfa.start), follow_ok)
        _, key, name, nxt, state = pos
        dfa = g.tail(name, nxt)
        out = bytearray()
        while not dfa.accepting[state]:
            row = dfa.row(state)
            want = dfa.dist[state] - 1
            byte = next(b for b in np.flatnonzero(row >= 0).tolist() if dfa.dist[row[b]] == want)
            out.append(byte)
            state = int(row[byte])
        return bytes(out)

    def count_tokens(self, data: bytes) -> int:
        """Tokens in a longest-match cut of ``data`` (bytes, if some byte has no token)."""
        found = self._tokens.get(data)
        if found is None:
            try:
                found = len(self.grammar.vocab.longest_match(data))
            except TokenizerError:
                found = len(data)
            self._tokens[data] = found
        return found

    def tokens(self, pos: Position, follow_ok: bool) -> int:
        """Tokens enough to finish the call from ``pos``."""
        return self.count_tokens(self.text(pos, follow_ok))

    def within(self, pos: Position, mask: Mask, budget: int, start_ok: bool, follow_ok: bool) -> np.ndarray:
        """The ids of ``mask`` after which the call can still close within ``budget - 1`` tokens.

        When none can (the budget was already too small), the ids that leave the fewest tokens
        are returned, so the mask is never empty.
        """
        g = self.grammar
        found: list[tuple[int, int]] = []
        if pos[0] == "tail":  # vectorised: the tokens left depend only on the state each token ends in
            base, ids, left = g._tail_outcomes(pos, follow_ok, tokens=True)
            if base is not None:
                string, exit_state = base
                after_quote = self.text(("tail", pos[1], pos[2], pos[3], exit_state), follow_ok)
                table = g._string_table()
                per_state = {
                    int(q): self.count_tokens(table.shortest(int(q)) + after_quote) for q in string.final_set.tolist()
                }
                lookup = np.zeros(table.dfa.n_states, dtype=np.int64)
                for q, n in per_state.items():
                    lookup[q] = n
                ids = np.concatenate([ids, g.index.ids[string.inside_rows]])
                left = np.concatenate([left, lookup[string.inside_finals]])
            if not ids.size:
                return np.empty(0, dtype=np.int32)
            return np.sort(ids[left <= max(budget - 1, int(left.min()))]).astype(np.int32)
        for tid in mask.ids.tolist():
            data = g.vocab.token_bytes[tid]
            after = g._after_special(pos, tid) if data is None else g.walk(pos, data, start_ok, follow_ok)
            if after is not None:
                found.append((tid, self.tokens(after, follow_ok)))
        if not found:
            return np.empty(0, dtype=np.int32)
        ids = np.array([t for t, _ in found], dtype=np.int32)
        left = np.array([n for _, n in found], dtype=np.int64)
        return np.sort(ids[left <= max(budget - 1, int(left.min()))])
