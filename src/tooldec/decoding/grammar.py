"""The compile step and what it makes: tools in, an immutable snapshot (``Grammar``) out.

A :class:`Compiler` keeps the bounded, locked caches of one vocabulary and dialect (tail automata
by schema hash, so a tool is compiled once whatever its name); every check runs when it compiles
(DESIGN invariant 5). A :class:`Grammar` walks positions over bytes; masks and budgets live in
``masking`` and ``budget``. Two flags from the cursor take part everywhere: ``start_ok`` (a call
may begin in text) and ``follow_ok`` (another call may follow the one being written).
"""

from __future__ import annotations

import hashlib
import itertools
import threading
import time
import weakref
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, TypeVar

from ..automata.dfa import SINK, LazyDFA, StringSpot, piece_automaton
from ..automata.json_schema import Style, Syntax, prepare_values, string_template
from ..automata.nfa import NFA
from ..caches import BoundedCache
from ..dialects.base import NEXT_CALL, Dialect
from ..errors import DuplicateToolError, ToolNotFoundError
from ..tokens import Vocabulary
from ..tokens.markers import with_markers
from ..tools import Tool, ToolLike, ToolSet
from ..tools.schema import prepare_formats
from ..tools.toolset import inventory_digest
from .masking import known_mask, mask_at
from .masks import Mask
from .names import NameIndex
from .openers import CommitKind, OpenerTables
from .positions import Head, Name, Open, Position, Tail, Text, Think
from .token_index import TokenIndex
from .trie_walk import NATIVE, trie
from .vector_walk import BlankTable, StringTable, blank_table

T = TypeVar("T")

if TYPE_CHECKING:
    from .masking import Crossing

__all__ = ["CompiledTail", "Compiler", "Grammar", "prepare_vocabulary"]

MB = 1 << 20


def prepare_vocabulary(vocab: Vocabulary) -> TokenIndex:
    """Build the per-vocabulary tables now, once per process, so no request pays for them. Safe
    from any thread and more than once; the tables are freed with the vocabulary."""
    index = TokenIndex.of(vocab)
    blank_table(index)
    vocab.prepare_matching()
    if NATIVE:
        trie(index)
    prepare_formats()
    for syntax in Syntax:
        string_table(index, syntax).walk(string_table(index, syntax).start_state)
    return index


def string_table(index: TokenIndex, syntax: Syntax) -> StringTable:
    """The shared table of what tokens do inside a plain JSON string of ``syntax``."""
    return index.extra(("strings", syntax), lambda: StringTable.plain(index, syntax))


PIECE_TABLES_KEPT = 16
"""Quoted-string templates whose tables a vocabulary keeps (one per style and stop texts)."""
PIECE_WALK_BYTES = 64 << 20
"""What one template's table keeps of its walks (about 6 MB each on a 150,000-token vocabulary)."""


def prepare_string_template(index: TokenIndex, style: Style, stops: tuple[str, ...]) -> None:
    """Walk the vocabulary now from the content states of a string that keeps ``stops`` out
    (about 30 ms each at 150,000 tokens), so the first request that writes one does not."""
    piece = piece_automaton(*string_template(style, stops))
    table = piece_table(index, piece)
    opened = piece.step(piece.start, b'"')
    for state in (opened, piece.step(opened, b"a")):
        if state != SINK:
            table.walk(state)


def piece_table(index: TokenIndex, piece: LazyDFA) -> StringTable:
    """The shared table of what tokens do inside the copies of one quoted-string template."""
    tables = index.extra(("piece strings",), lambda: BoundedCache[LazyDFA, StringTable](PIECE_TABLES_KEPT, lambda _: 1))
    return tables.get_or_make(piece, lambda: StringTable(index, piece, max_bytes=PIECE_WALK_BYTES))


_SERIALS = itertools.count(1)
"""Identities of tails and snapshots for cache keys (``next`` on a count is atomic in CPython)."""


@dataclass(eq=False)
class CompiledTail:
    """One schema's tail automaton in one form (shared by every snapshot); caches key on
    ``serial``, never ``key``, as its state numbers mean something only with this object."""

    key: tuple[str, int, bool]
    dfa: LazyDFA
    nfa_states: int
    next_call: bool = False
    """Whether the tail can hand over to another call (its distances may lead into it)."""
    serial: int = 0
    counted_states: int = 0
    """How many DFA states the tail cache counted last (masking recounts it as the DFA grows)."""

    def __post_init__(self) -> None:
        self.serial = next(_SERIALS)

    @property
    def nbytes(self) -> int:
        return self.dfa.nbytes + 120 * self.nfa_states


class Compiler:
    """Compiles tool inventories for one vocabulary and dialect; owns the caches.

    Thread-safety: a compiler and the snapshots it returns may be shared by any number of
    threads; the caches are bounded (bytes, least recently used first) and locked.

    Args:
        vocab: The model's vocabulary (padded to the logits' width if they are wider).
        dialect: How calls are written.
        tail_cache_bytes: Bound on the compiled tool automata (a live snapshot pins those it uses).
        mask_cache_bytes: Bound on cached masks (19 KB each at 151k tokens: 32 MB keep about 1,700).
        snapshot_cache: How many snapshots to keep for repeated tool lists.

    Examples:
        >>> from tooldec.tokens import Vocabulary
        >>> from tooldec.dialects import Hermes
        >>> vocab = Vocabulary.from_tokens([bytes([b]) for b in range(256)])
        >>> compiler = Compiler(vocab, Hermes())
        >>> def add(a: int, b: int) -> int:
        ...     '''Add two numbers.'''
        ...     return a + b
        >>> grammar = compiler.compile([add])
        >>> grammar.names, compiler.compile([add]) is grammar
        (['add'], True)
    """

    def __init__(self, vocab: Vocabulary, dialect: Dialect, *, tail_cache_bytes: int = 32 * MB,
                 mask_cache_bytes: int = 32 * MB, snapshot_cache: int = 8) -> None:
        start = time.perf_counter()
        vocab = with_markers(vocab, dialect.markers_in_use)
        self.vocab = vocab
        """The given vocabulary with the dialect's markers spelled (``tooldec.tokens.markers``)."""
        self.dialect = dialect
        self.index = prepare_vocabulary(vocab)
        self.openers = OpenerTables(self.index, dialect)
        stops = dialect.value_stops()
        for style in {dialect.form_style(form) for form in range(dialect.forms)}:
            prepare_values(style, self.index.longest)
            if stops:
                prepare_string_template(self.index, style, stops)
        self._checks_tools = type(dialect).check_tool is not Dialect.check_tool
        self.key = hashlib.sha256(f"{vocab.fingerprint}\0{dialect.key}".encode()).hexdigest()[:24]
        self.tails: BoundedCache[tuple[str, int, bool], CompiledTail] = BoundedCache(tail_cache_bytes)
        # tails a snapshot pins after the cache dropped them: one automaton per key while held
        self._live_tails: weakref.WeakValueDictionary[tuple[str, int, bool], CompiledTail] = weakref.WeakValueDictionary()
        self.masks: BoundedCache[tuple[Any, ...], Mask] = BoundedCache(mask_cache_bytes)
        # What a token that ends a call goes on to (masking._exit_verdict): about 400 bytes an entry.
        self.exits: BoundedCache[tuple[Any, ...], tuple[bool, int, bool]] = BoundedCache(4 * MB, sizer=lambda _: 400)
        # The verdicts of a whole set of tokens that reach a tail's exit (masking._cross).
        self.crossings: BoundedCache[tuple[Any, ...], Crossing] = BoundedCache(4 * MB)
        self.snapshots: BoundedCache[str, Grammar] = BoundedCache(snapshot_cache * 1024, sizer=lambda g: 1024)
        self._snapshot_keys: BoundedCache[str, str] = BoundedCache(  # digest -> snapshot key (see _key_of)
            _SNAPSHOT_KEYS_KEPT * _SNAPSHOT_KEY_BYTES, sizer=lambda _: _SNAPSHOT_KEY_BYTES)
        self._checked: BoundedCache[tuple[str, str], bool] = BoundedCache(8 * MB, sizer=lambda _: 200)
        self._lock = threading.Lock()
        self.prepare_seconds = time.perf_counter() - start
        """Time spent preparing the vocabulary and the opener and value automata."""

    def kept(self, key: tuple[Any, ...], make: Callable[[], T], keep: Callable[[T], bool] | None = None) -> T:
        """A value kept in the bounded mask cache, made on a miss (stored if ``keep`` accepts it);
        ``key`` names what it depends on (snapshot serial, schema hash)."""
        return self.masks.get_or_make(key, make, keep)  # type: ignore[arg-type,return-value]

    # -- shared compilers for the ``Grammar(tools, vocab, dialect)`` shorthand ----------------------

    @classmethod
    def shared(cls, vocab: Vocabulary, dialect: Dialect) -> Compiler:
        """The process-wide compiler of ``vocab`` and ``dialect`` (alive while a snapshot uses it)."""
        with _SHARED_LOCK:
            per_vocab = _SHARED.setdefault(vocab, {})
            ref = per_vocab.get(dialect.key)
            found = ref() if ref is not None else None
            if found is None:
                found = cls(vocab, dialect)
                per_vocab[dialect.key] = weakref.ref(found)
            return found

    # -- compiling --------------------------------------------------------------------------------

    def compile(self, tools: ToolSet | Iterable[ToolLike]) -> Grammar:
        """An immutable snapshot of ``tools`` (a ``ToolSet`` or what it takes); the same object
        again for a tool list seen before, in any order, while the snapshot cache holds it.

        Raises:
            ToolRegistrationError: A tool cannot be made, a name is repeated, or the dialect
                cannot write calls to a tool (before anything is decoded).
        """
        toolset = tools if isinstance(tools, ToolSet) else ToolSet(tools)
        key = self._key_of(toolset.digest)  # a set of a list seen before knows it without its inventory
        found = self.snapshots.get(key)
        if found is not None:  # its tools were checked when it was made
            return found
        inventory = toolset.inventory()
        if self._checks_tools:
            for tool in inventory.tools.values():
                self.check(tool)
        grammar = Grammar._snapshot(self, inventory.tools, NameIndex(presorted=inventory.sorted_names), key)
        return self.snapshots.put(key, grammar)

    def check(self, tool: Tool) -> None:
        """The dialect's checks of ``tool``, cached by name and schema."""
        if not self._checks_tools:
            return
        key = (tool.name, tool.schema_hash)
        if self._checked.get(key) is None:
            self.dialect.check_tool(tool)
            self._checked.put(key, True)

    def inventory_key(self, tools: Mapping[str, Tool]) -> str:
        """Stable key of an inventory: vocabulary, dialect and every (name, schema hash), any order."""
        return self._key_of(inventory_digest(sorted(tool.inventory_entry for tool in tools.values())))

    def _key_of(self, digest: str) -> str:
        """The snapshot key of a digest, remembered (a cold SHA-256 costs tens of µs, a lookup a few)."""
        return self._snapshot_keys.get_or_make(
            digest, lambda: hashlib.sha256(f"{self.key}\0{digest}".encode()).hexdigest())

    def tail(self, tool: Tool, form: int, chained: bool) -> CompiledTail:
        """The tail automaton of ``tool`` in ``form`` (built on first use, then shared)."""
        key = (tool.schema_hash, form, chained)
        found = self.tails.get(key)
        if found is not None:
            return found
        with self._lock:
            found = self._live_tails.get(key)
        if found is None:
            nfa = NFA()
            frag = self.dialect.call_tail(nfa, tool, form=form, next_call=chained)
            built = CompiledTail(key, LazyDFA(nfa, frag, window=self.index.longest), nfa.size,
                                 NEXT_CALL in nfa.marks.values())
            with self._lock:
                found = self._live_tails.setdefault(key, built)
        return self.tails.put(key, found)

    @property
    def blank_table(self) -> BlankTable:
        return blank_table(self.index)

    def string_place(self, style: Style, spot: StringSpot) -> tuple[StringTable, int]:
        """The table that masks ``spot``'s string, and the state of its automaton ``spot`` is."""
        if spot.piece is None:
            table = string_table(self.index, style.syntax)
            return table, table.start_state
        return piece_table(self.index, spot.piece), spot.content


_SNAPSHOT_KEYS_KEPT = 256
"""Digests whose snapshot keys a compiler remembers (least recently used first out)."""
_SNAPSHOT_KEY_BYTES = 200
"""What the cache counts for one: two 64-character strings and their entry."""

_SHARED_LOCK = threading.Lock()
_SHARED: weakref.WeakKeyDictionary[Vocabulary, dict[str, weakref.ref[Compiler]]] = weakref.WeakKeyDictionary()


class Grammar:
    """An immutable snapshot of an inventory for one vocabulary and dialect.

    Shareable by any number of threads and cursors; picklable (a worker rebuilds its own compiler
    caches). ``Grammar(tools, vocab, dialect)`` is shorthand for
    ``Compiler.shared(vocab, dialect).compile(tools)``. The tail automata it has used stay pinned
    to it (its cursors hold their state numbers), so its memory grows with the tools called.

    Attributes:
        key: Stable identity: vocabulary fingerprint, dialect and options, every tool's schema hash.
        serial: This object's identity in the compiler's caches (cached masks are per object).
        tools: Name -> Tool (read-only).
        names: The names, sorted.
    """

    compiler: Compiler
    key: str
    serial: int
    tools: Mapping[str, Tool]
    _names: NameIndex
    _pinned: dict[tuple[str, int, bool], CompiledTail]
    _pin_lock: threading.Lock
    _openers: list[OpenerTables]
    _alive: dict[tuple[int, str], bool]
    owns_values: list[bool]
    """Whether the compiler's caches hold values of this snapshot's own (under its serial)."""

    def __new__(cls, tools: ToolSet | Iterable[ToolLike], vocab: Vocabulary, dialect: Dialect) -> Grammar:
        return Compiler.shared(vocab, dialect).compile(tools)  # the compiler's snapshot itself

    @classmethod
    def _snapshot(cls, compiler: Compiler, tools: Mapping[str, Tool], names: NameIndex, key: str) -> Grammar:
        grammar = object.__new__(cls)
        grammar.compiler = compiler
        grammar.key = key
        grammar.serial = next(_SERIALS)
        grammar.tools = tools if isinstance(tools, MappingProxyType) else MappingProxyType(dict(tools))
        grammar._names = names
        grammar._pinned = {}
        grammar._pin_lock = threading.Lock()
        # filled once, under the lock: state numbers in masks cached by ``serial`` name one automaton
        grammar._openers = [] if compiler.dialect.named_openers else [compiler.openers]
        grammar._alive = {}
        grammar.owns_values = [False]  # a box, as ``_openers``
        return grammar

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild, (list(self.tools.values()), self.vocab, self.dialect))

    def __repr__(self) -> str:
        return f"Grammar({len(self.tools)} tools, {self.dialect!r}, {self.vocab.name}, key={self.key[:12]})"

    # -- what it is made of -----------------------------------------------------------------------

    @property
    def vocab(self) -> Vocabulary:
        return self.compiler.vocab

    @property
    def dialect(self) -> Dialect:
        return self.compiler.dialect

    @property
    def openers(self) -> OpenerTables:
        """The opener automata: the compiler's, or with named openers this snapshot's own, built on first use."""
        box = self._openers
        if not box:
            made = OpenerTables(self.compiler.index, self.dialect, list(self.tools))
            with self._pin_lock:
                if not box:
                    box.append(made)
        return box[0]

    @property
    def openers_owner(self) -> object:
        """What the opener automata's state numbers belong to (a cache key part)."""
        return self.compiler.key if self.openers is self.compiler.openers else self.serial

    @property
    def names(self) -> list[str]:
        return list(self._names)

    @property
    def name_index(self) -> NameIndex:
        return self._names

    def with_tools(self, *, add: Iterable[ToolLike] = (), remove: Iterable[str] = ()) -> Grammar:
        """A new snapshot with tools added and removed (to replace one: remove, then add).

        Raises:
            ToolNotFoundError: A removed name is not in the inventory.
            DuplicateToolError: An added name is already there (and not removed).
            ToolRegistrationError: An added tool cannot be made or written by the dialect.
        """
        tools = dict(self.tools)
        names = self._names
        for name in remove:
            if name not in tools:
                raise ToolNotFoundError(f"no tool named {name!r} to remove")
            del tools[name]
            names = names.without(name)
        for item in add:
            tool = Tool.coerce(item)
            if tool.name in tools:
                raise DuplicateToolError(
                    "a tool with this name is already in the set; remove it first or rename one", tool=tool.name)
            self.compiler.check(tool)
            tools[tool.name] = tool
            names = names.with_name(tool.name)
        key = self.compiler.inventory_key(tools)
        found = self.compiler.snapshots.get(key)
        if found is not None:
            return found
        return self.compiler.snapshots.put(key, Grammar._snapshot(self.compiler, tools, names, key))

    def tail(self, name: str, form: int, chained: bool) -> CompiledTail:
        """The tool's tail automaton in ``form``: the same object for the snapshot's whole life."""
        key = (name, form, chained)
        found = self._pinned.get(key)
        if found is None:
            made = self.compiler.tail(self.tools[name], form, chained)
            with self._pin_lock:
                found = self._pinned.setdefault(key, made)
        return found

    # -- positions --------------------------------------------------------------------------------

    def start(self, tool_choice: str) -> Position:
        """Where a sequence begins: free text, a call that must come first, or inside reasoning if
        the prompt opened it (``Reasoning.inside_at_start``)."""
        openers = self.openers
        free = tool_choice in ("auto", "none")
        only = None if free or tool_choice == "required" else tool_choice
        reasoning = self.dialect.reasoning
        if reasoning is not None and reasoning.inside_at_start:
            return self.thinking(not free, only)
        if free:
            return Text(openers.search_start)
        return Open(openers.open.start, only)

    @staticmethod
    def is_accepting(pos: Position) -> bool:
        return isinstance(pos, Text)

    def thinking(self, forced: bool, only: str | None) -> Think:
        """The start of a reasoning section (``forced``: a call must follow it)."""
        think = self.openers.think
        assert think is not None  # only a dialect with reasoning opens one
        return Think(think.start, forced, only)

    def after_think(self, pos: Think) -> Position:
        """Where the output goes on once the reasoning section of ``pos`` closed."""
        openers = self.openers
        return Open(openers.open_after_think, pos.only) if pos.forced else Text(openers.after_think)

    def open_alive(self, state: int, only: str | None) -> bool:
        """Whether the call ``tool_choice`` asks for can still open from ``open`` state ``state``
        (only named openers can lead elsewhere)."""
        if only is None or not self.dialect.named_openers:
            return True
        key = (state, only)
        found = self._alive.get(key)
        if found is None:
            openers = self.openers
            dfa = openers.open
            found, seen, todo = False, {state}, [state]
            while todo and not found:
                row = dfa.row(todo.pop())
                for t in {int(t) for t in row[row >= 0].tolist()} - seen:
                    seen.add(t)
                    if not dfa.arrays.exits[t]:
                        todo.append(t)
                    else:
                        info = openers.commits[openers.commit_of(dfa, t)]
                        found = info.kind is CommitKind.REASONING or info.tool in (None, only)
            with self._pin_lock:
                self._alive[key] = found
        return found

    def after_commit(self, commit: int, only: str | None, follow_ok: bool) -> Position | None:
        """Where the call goes on after opener ``commit`` (``None``: it named a tool not asked for)."""
        info = self.openers.commits[commit]
        if info.kind is CommitKind.REFUSED:
            return None
        if info.kind is CommitKind.REASONING:
            return self.thinking(info.forced, only)
        if info.tool is not None:  # the name and the start of its tail are written already
            if only is not None and only != info.tool:
                return None
            named = Name(info.form, info.tool.encode(), info.tool)
            return self.walk(named, self.dialect.form_tail_literal(info.form), True, follow_ok)[0]
        return self.after_tag(info.form, only) if info.head else Name(info.form, b"", only)

    def after_tag(self, form: int, only: str | None) -> Position:
        """Right after a tag: the form's head, or the name at once when the head is empty."""
        head = self.openers.heads[form]
        return Name(form, b"", only) if head.arrays.accepting[head.start] else Head(form, head.start, only)

    def _spells_name(self, prefix: bytes, only: str | None) -> bool:
        """Whether ``prefix`` begins a tool name (``only``'s, where ``tool_choice`` names one)."""
        if only is None:
            return self._names.has_prefix(prefix)
        return only.encode().startswith(prefix) and only in self.tools

    def after_special(self, pos: Position, tid: int, start_ok: bool) -> Position | None:
        """The position after a special token (no bytes), or ``None`` if it is not allowed there."""
        openers = self.openers
        form = openers.special_forms.get(tid)
        if isinstance(pos, Think):  # reasoning is free text: no special opens a call there
            return pos if openers.think_is_free(pos.state) else None  # inside a close that refuses markers
        if isinstance(pos, Text):
            if tid in openers.refused_specials:
                return None
            if form is not None:
                return self.after_tag(form, None) if start_ok else None
            return pos
        if isinstance(pos, Open) and pos.state == openers.open.start and tid in openers.open_special_forms:
            return self.after_tag(openers.open_special_forms[tid], pos.only)
        return None

    def walk(self, pos: Position, data: bytes, start_ok: bool, follow_ok: bool) -> tuple[Position | None, int]:
        """The position after ``data`` (``None``: it leaves the language) and the calls closed on the way."""
        openers = self.openers
        names = self._names
        i, n, closed = 0, len(data), 0
        while i < n:
            if isinstance(pos, Text):
                state, used, commit = openers.walk_text(pos.state, data[i:])
                i += used
                if commit < 0:
                    return Text(state), closed
                if openers.commits[commit].kind is CommitKind.REASONING:  # whether or not a call may start
                    pos = self.thinking(False, None)
                    continue
                committed = self.after_commit(commit, None, follow_ok) if start_ok else None
                if committed is None:
                    return None, closed
                pos, start_ok = committed, follow_ok
            elif isinstance(pos, Think):
                state, used, ended = openers.walk_think(pos.state, data[i:])
                i += used
                if state == SINK:  # a marker the section refuses (``Reasoning.refused_inside``)
                    return None, closed
                if not ended:
                    return Think(state, pos.forced, pos.only), closed
                pos = self.after_think(pos)
            elif isinstance(pos, Open):
                state, used, commit = openers.walk_open(pos.state, data[i:])
                i += used
                if state == SINK:
                    return None, closed
                if commit < 0:
                    return (Open(state, pos.only) if self.open_alive(state, pos.only) else None), closed
                committed = self.after_commit(commit, pos.only, follow_ok)
                if committed is None:
                    return None, closed
                pos = committed
            elif isinstance(pos, Head):
                head = openers.heads[pos.form]
                state = pos.state
                while i < n:
                    state = head.next(state, data[i])
                    i += 1
                    if state == SINK:
                        return None, closed
                    if head.arrays.accepting[state]:
                        break
                else:
                    return Head(pos.form, state, pos.only), closed
                pos = Name(pos.form, b"", pos.only)
            elif isinstance(pos, Name):
                whole = pos.prefix + data[i:]
                if self._spells_name(whole, pos.only):  # the rest stays in the name: no byte-by-byte walk
                    return Name(pos.form, whole, pos.only), closed
                prefix = pos.prefix + data[i:i + 1]
                if self._spells_name(prefix, pos.only):
                    pos = Name(pos.form, prefix, pos.only)
                    i += 1
                    continue
                name = names.terminal(pos.prefix) if pos.only is None else (
                    pos.only if pos.only.encode() == pos.prefix else None)
                if name is None:
                    return None, closed
                tail = self.tail(name, pos.form, follow_ok)
                pos = Tail(pos.form, name, follow_ok, tail.dfa.start, _start_counts(tail))
            else:
                dfa = self.tail(pos.tool, pos.form, pos.chained).dfa
                state, counts, i = dfa.walk_counted(pos.state, dict(pos.counts), data, i)
                if state == SINK:
                    return None, closed
                if not dfa.arrays.exits[state]:  # every byte read, still inside the tail
                    return Tail(pos.form, pos.tool, pos.chained, state, tuple(sorted(counts.items()))), closed
                closed += 1
                if dfa.marks.get(state) == NEXT_CALL:
                    pos = Name(pos.form, b"", None)
                elif i < n and (self.dialect.stop_after_call or self.dialect.call_ends_output):
                    return None, closed  # the runtime writes the result right here, or the output ends: the call ends the token
                else:
                    pos = Text(openers.after_call)
                    start_ok = follow_ok
        return pos, closed

    # -- masks and budgets (see ``masking`` and ``budget``) ----------------------------------------

    def mask(self, pos: Position, start_ok: bool, follow_ok: bool) -> Mask:
        return mask_at(self, pos, start_ok, follow_ok)

    def known_mask(self, pos: Position, start_ok: bool, follow_ok: bool) -> Mask | None:
        """:meth:`mask` if it is cached, else ``None`` (nothing is computed)."""
        return known_mask(self, pos, start_ok, follow_ok)


def _start_counts(tail: CompiledTail) -> tuple[tuple[int, int], ...]:
    """Exact counters at a tail's start (regions entered there start at 0)."""
    return tuple((r, c) for r, c in tail.dfa.classes(tail.dfa.start) if c >= 0)


def _rebuild(tools: list[Tool], vocab: Vocabulary, dialect: Dialect) -> Grammar:
    return Compiler.shared(vocab, dialect).compile(tools)
