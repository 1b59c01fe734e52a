"""The dialect's openers as one search automaton over text, and a watcher for streamed text.

The engine walks ``search_automaton`` in free text (``tooldec.decoding.openers``); :class:`OpenerWatch`
follows decoded text with it, so a streaming server holds back what may still become a call.
"""

from __future__ import annotations

import enum
from collections.abc import Collection
from dataclasses import dataclass, field

from ..automata.dfa import LazyDFA
from ..automata.nfa import BLANK_RANGES, NFA, Frag
from ..caches import BoundedCache
from ..tokens.markers import MARK
from .base import Anchor, Dialect, json_space

__all__ = ["Commit", "CommitKind", "OpenerWatch", "SearchAutomaton", "search_automaton"]


class CommitKind(enum.Enum):
    """What completing a watched text in free text does."""

    CALL = "call"
    """An opener: a call begins."""
    REASONING = "reasoning"
    """The reasoning section's open delimiter: free text in which no call opens, until its close."""
    REFUSED = "refused"
    """A refused text (``Dialect.refusals``): the token that completes it is not allowed."""


@dataclass(frozen=True)
class Commit:
    """What completing one watched text leads to; for a named opener, the tool it named."""

    form: int
    head: bool
    tool: str | None = None
    kind: CommitKind = CommitKind.CALL
    forced: bool = False
    """For a reasoning section's open: a call must follow its close (the ``open`` automaton's)."""
    label: str = ""
    """For a refused text: the refusal's name (what a trace counts)."""


@dataclass
class SearchAutomaton:
    """The openers of a dialect (those written as text) as automata.

    Attributes:
        search: Free text then an opener; exits (marks ``commit<i>``) where an opener completes.
        open: The forced openers alone, anchored at the start (a call that must come first).
        special_tags: Tags left out because they are special tokens (matched by id), by form.
        think: Any reasoning text, then its close (mark ``close``); ``None`` without reasoning.
        after_think: The search state right after a reasoning section (``open_after_think``: the
            ``open`` one, for a call that must follow).
        think_text: The ``think`` NFA state of the section's free text (``-1``: none): a state
            without it is inside the close.
    """

    nfa: NFA
    search: LazyDFA
    open: LazyDFA
    commits: list[Commit]
    special_tags: dict[str, int]
    open_special_tags: dict[str, int]
    commit_bytes: list[int]
    after_call: int
    quiet: frozenset[int]
    think: LazyDFA | None = None
    after_think: int = -1
    open_after_think: int = -1
    refused_tags: tuple[tuple[str, str], ...] = ()
    think_text: int = -1
    _quiet_states: dict[int, bool] = field(default_factory=dict)

    def is_quiet(self, state: int) -> bool:
        """Whether no opener is partly matched in search state ``state``."""
        found = self._quiet_states.get(state)
        if found is None:
            found = self._quiet_states[state] = self.search.nfa_states(state) <= self.quiet
        return found

    def commit_of(self, dfa: LazyDFA, state: int) -> int:
        """The index into ``commits`` of the opener an exit ``state`` of ``dfa`` completes."""
        return int(dfa.marks[state][len("commit"):])


def search_automaton(dialect: Dialect, special: Collection[str] = (), *, window: int = 256,
                     names: Collection[str] | None = None, spelled: bool = True) -> SearchAutomaton:
    """The search automata of ``dialect``; tags in ``special`` are matched by token id instead.

    ``spelled=False`` reads markers as their decoded text (a watch). ``names``: the tool names a
    named opener commits on; ``None``: any dotted identifier, one commit without a tool.
    """
    def spell(text: str) -> bytes:
        return dialect.spelled(text) if spelled else text.encode("utf-8")

    nfa = NFA()
    commits: list[Commit] = []
    special_tags: dict[str, int] = {}
    starts: dict[Anchor, list[int]] = {a: [] for a in Anchor}
    forced_starts: list[int] = []
    forced_openers = dialect.forced_openers()
    forced = {o.name for o in forced_openers}
    commit_bytes: set[int] = set()
    done = nfa.state()  # every commit leads here: states that cannot reach it are dead in ``open``

    def commit(piece: Frag, info: Commit) -> None:
        end = nfa.state()
        nfa.epsilon(piece[1], end)
        nfa.mark(end, f"commit{len(commits)}")
        commits.append(info)
        nfa.epsilon(end, done)
        commit_bytes.update(_bytes_into(nfa, end))

    for opener in dialect.openers():
        if opener.tag is not None and opener.tag in special:
            special_tags[opener.tag] = opener.form
            continue
        if opener.named:
            begin, ends = _named_opener(nfa, opener.text(nfa), dialect.form_tail_literal(opener.form),  # type: ignore[misc]
                                        names)
            for tool, end in ends:
                nfa.mark(end, f"commit{len(commits)}")
                commits.append(Commit(opener.form, False, tool))
                nfa.epsilon(end, done)
            commit_bytes.add(dialect.form_tail_literal(opener.form)[-1])
        else:
            piece = nfa.literal(spell(opener.tag)) if opener.tag is not None else opener.text(nfa)  # type: ignore[misc]
            commit(piece, Commit(opener.form, opener.tag is not None or opener.head))
            begin = piece[0]
        starts[opener.anchor].append(begin)
        if opener.name in forced:
            forced_starts.append(begin)
    refused_tags: list[tuple[str, str]] = []
    for refusal in dialect.refusals():
        if refusal.tag is not None and refusal.tag in special:
            refused_tags.append((refusal.tag, refusal.name))
            continue
        piece = nfa.literal(spell(refusal.tag)) if refusal.tag is not None else refusal.text(nfa)  # type: ignore[misc]
        commit(piece, Commit(-1, False, kind=CommitKind.REFUSED, label=refusal.name))
        starts[refusal.anchor].append(piece[0])
    reasoning = dialect.reasoning
    think_start = forced_think = -1
    if reasoning is not None:
        for must_call in (False, True):  # free text may start with whitespace; a forced start is exact
            delimiter = nfa.literal(spell(reasoning.open))
            piece = delimiter if must_call else nfa.seq(json_space(nfa), delimiter)
            commit(piece, Commit(-1, False, kind=CommitKind.REASONING, forced=must_call))
            if must_call:
                forced_think = piece[0]
            else:
                think_start = piece[0]
    first, loop, line = nfa.state(), nfa.state(), nfa.state()
    nfa.edge(loop, 0, 255, loop)
    nfa.edge(loop, 0x0A, 0x0A, line)
    nfa.epsilon(line, loop)
    nfa.epsilon(first, loop)
    for s in starts[Anchor.ANYWHERE]:
        nfa.epsilon(loop, s)
    for s in starts[Anchor.LINE]:
        nfa.epsilon(line, s)
        nfa.epsilon(first, s)
    for s in starts[Anchor.START]:
        nfa.epsilon(first, s)
    begin_answer = nfa.state()  # the start of the answer, with or without reasoning before it
    nfa.epsilon(begin_answer, first)
    if think_start >= 0:
        nfa.epsilon(begin_answer, think_start)
    after_think = _after_blanks(nfa, first)
    search = LazyDFA(nfa, (begin_answer, done), window=window, prune=False)
    anchored = nfa.state()
    for s in forced_starts:
        nfa.epsilon(anchored, s)
    open_after = _after_blanks(nfa, anchored)
    opening_start = anchored
    if forced_think >= 0:
        opening_start = nfa.state()
        nfa.epsilon(opening_start, anchored)
        nfa.epsilon(opening_start, forced_think)
    opening = LazyDFA(nfa, (opening_start, done), window=window)
    quiet = nfa.closure([first]) | nfa.closure([loop]) | nfa.closure([line])
    open_special = {o.tag: o.form for o in forced_openers if o.tag in special_tags}
    think, think_text = None, -1
    if reasoning is not None:
        think_nfa = NFA()
        any_text = _text_without(think_nfa, [spell(marker) for marker in reasoning.refused_inside])
        think_text = any_text[0]
        close = think_nfa.literal(spell(reasoning.close))
        end = think_nfa.state()
        think_nfa.epsilon(close[1], end)
        think_nfa.mark(end, "close")
        think = LazyDFA(think_nfa, think_nfa.seq(any_text, (close[0], end)), window=window, prune=False)
    return SearchAutomaton(nfa, search, opening, commits, special_tags, open_special, sorted(commit_bytes),
                           search.state_of([loop]), frozenset(quiet), think,
                           search.state_of([after_think]) if think is not None else -1,
                           opening.state_of([open_after]) if think is not None else -1, tuple(refused_tags),
                           think_text)


def _text_without(nfa: NFA, markers: Collection[bytes]) -> Frag:
    """Any text without the spelled ``markers``; its start state is its end and its free text's."""
    refused = sorted({m[1] for m in markers if len(m) == 2 and m[0] == MARK})
    if not refused:
        return nfa.star(nfa.byte_ranges([(0, 255)]))
    text, mark = nfa.state(), nfa.state()
    nfa.edge(text, 0, MARK - 1, text)
    nfa.edge(text, MARK, MARK, mark)
    low = 0
    for index in refused:  # after MARK, every index but the refused ones
        if low < index:
            nfa.edge(mark, low, index - 1, text)
        low = index + 1
    if low <= 255:
        nfa.edge(mark, low, 255, text)
    return text, text


def _after_blanks(nfa: NFA, target: int) -> int:
    """A state that reads any whitespace and then goes on as ``target``."""
    state = nfa.state()
    for lo, hi in BLANK_RANGES:
        nfa.edge(state, lo, hi, state)
    nfa.epsilon(state, target)
    return state


_IDENT_START = [(0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A)]
_IDENT = [(0x30, 0x39), *_IDENT_START]


def _named_opener(nfa: NFA, piece: tuple[int, int], literal: bytes,
                  names: Collection[str] | None) -> tuple[int, list[tuple[str | None, int]]]:
    """``piece``, a tool name, then ``literal``: the start state and, per name, its end state
    (a byte trie, so the automaton grows with the names' total length)."""
    if not literal:
        raise ValueError("a named opener needs the form's tail to start with a fixed byte (form_tail_literal)")
    ends: list[tuple[str | None, int]] = []
    if names is None:
        def word() -> tuple[int, int]:
            return nfa.seq(nfa.byte_ranges(_IDENT_START), nfa.star(nfa.byte_ranges(_IDENT)))

        dotted = nfa.seq(word(), nfa.star(nfa.seq(nfa.literal(b"."), word())))
        after = nfa.seq(dotted, nfa.literal(literal))
        nfa.epsilon(piece[1], after[0])
        end = nfa.state()
        nfa.epsilon(after[1], end)
        return piece[0], [(None, end)]
    nodes = {b"": piece[1]}
    for name in sorted(names):
        data = name.encode()
        for i in range(1, len(data) + 1):
            if data[:i] not in nodes:
                nodes[data[:i]] = nfa.state()
                nfa.edge(nodes[data[:i - 1]], data[i - 1], data[i - 1], nodes[data[:i]])
        tail = nfa.literal(literal)
        nfa.epsilon(nodes[data], tail[0])
        end = nfa.state()
        nfa.epsilon(tail[1], end)
        ends.append((name, end))
    return piece[0], ends


def _bytes_into(nfa: NFA, target: int) -> set[int]:
    """Bytes on the edges that lead (through epsilon moves) into ``target``."""
    out: set[int] = set()
    for edges in nfa.edges:
        for lo, hi, dst in edges:
            if target in nfa.closure([dst]):
                out.update(range(lo, hi + 1))
    return out


_SHARED: BoundedCache[tuple[str, tuple[str, ...] | None], SearchAutomaton] = BoundedCache(64, sizer=lambda _: 1)
"""Search automata by dialect (and named opener's tool names), shared by a server's watches. Bounded, locked."""


class OpenerWatch:
    """Follows a generation's text and tells where calls may begin (streaming servers).

    Tags count as decoded text; reasoning text is not fed (:meth:`after_reasoning`). ``names``:
    the tools of a named opener (else any identifier). Not thread-safe: one watch per generation.

    Examples:
        >>> from tooldec.dialects import Hermes
        >>> watch = OpenerWatch(Hermes())
        >>> watch.feed(b"Sure. <tool")
        >>> watch.held, watch.call_start
        (5, None)
        >>> watch.feed(b"_call>")
        >>> watch.call_start
        6
    """

    def __init__(self, dialect: Dialect, names: Collection[str] | None = None) -> None:
        named = tuple(sorted(names)) if names is not None and dialect.named_openers else None
        found = _SHARED.get_or_make((dialect.key, named), lambda: search_automaton(dialect, names=named, spelled=False))
        self._search = found
        self._state = found.search.start
        self._length = 0
        self._quiet_at = 0
        self.call_start: int | None = None
        """Byte offset where the current call's opener began (``None``: no call yet)."""

    @property
    def held(self) -> int:
        """Bytes at the end of the text that may still be the start of a call."""
        return 0 if self.call_start is not None else self._length - self._quiet_at

    def feed(self, data: bytes) -> None:
        """More text (bytes). Stops following at the first call; :meth:`after_call` resumes."""
        if self.call_start is not None:
            self._length += len(data)
            return
        auto = self._search
        dfa = auto.search
        for i, byte in enumerate(data):
            self._state = dfa.next(self._state, byte)
            self._length += 1
            if dfa.arrays.exits[self._state]:
                if auto.commits[auto.commit_of(dfa, self._state)].kind is not CommitKind.CALL:
                    self._state = auto.after_call  # a reasoning open or a refused text: no call begins there
                    self._quiet_at = self._length
                    continue
                self.call_start = self._quiet_at
                self._length += len(data) - i - 1
                return
            if auto.is_quiet(self._state):
                self._quiet_at = self._length

    def after_reasoning(self) -> None:
        """A reasoning section closed (its text was not fed): follow the answer from here."""
        self._state = self._search.after_think if self._search.after_think >= 0 else self._search.search.start
        self._quiet_at = self._length

    def after_call(self) -> None:
        """A call closed: follow free text again from here."""
        self._state = self._search.after_call
        self._quiet_at = self._length
        self.call_start = None
