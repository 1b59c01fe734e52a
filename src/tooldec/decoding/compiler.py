"""The compile step: tools in, an immutable snapshot (``Grammar``) out, caches owned here.

A :class:`Compiler` serves one vocabulary and one dialect. It prepares the vocabulary once (token
index, string tables, opener automata: timed in ``prepare_seconds``) and keeps three bounded,
locked caches that any number of threads may share:

* tail automata by schema hash, form and chaining: a tool is compiled once whatever its name
  and however many inventories hold it; its DFA is expanded as walks need it;
* masks by position (keyed by the snapshot for positions whose mask depends on the names);
* snapshots by inventory key, so a tool list seen before (same schemas, any order) costs a hash.

Every check runs in :meth:`Compiler.compile` (tools are validated when they are made; the
dialect's ``check_tool`` here), so once a snapshot exists no schema error can surface while
decoding.
"""

from __future__ import annotations

import hashlib
import itertools
import threading
import time
import weakref
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from ..automata.dfa import LazyDFA
from ..automata.json_schema import Style, Syntax, prepare_values
from ..automata.nfa import NFA
from ..caches import BoundedCache
from ..dialects.base import NEXT_CALL, Dialect
from ..tokens import Vocabulary
from ..tokens.markers import with_markers
from ..tools import Tool, ToolLike, ToolSet
from ..tools.schema import prepare_formats
from ..tools.toolset import inventory_digest
from .masks import Mask
from .names import NameIndex
from .openers import OpenerTables
from .token_index import TokenIndex
from .trie_walk import NATIVE, trie
from .vector_walk import BlankTable, StringTable, blank_table

T = TypeVar("T")

if TYPE_CHECKING:
    from .grammar import Grammar
    from .masking import Crossing

__all__ = ["CompiledTail", "Compiler", "prepare_vocabulary"]

MB = 1 << 20


def prepare_vocabulary(vocab: Vocabulary) -> TokenIndex:
    """Build the per-vocabulary tables now (token index, JSON string and whitespace tables, the
    compiled walk's trie, the longest-match tables of token budgets), once per process, and the
    process-wide automata of the ``format`` values (:func:`tooldec.tools.schema.prepare_formats`).

    A server calls this when it loads the tokenizer, so no request pays it. Safe to call from any
    thread and more than once; the tables are freed with the vocabulary.
    """
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
    """The shared table of what tokens do inside a JSON string of ``syntax``."""
    return index.extra(("strings", syntax), lambda: StringTable(index, syntax))


_SERIALS = itertools.count(1)
"""Identities of tails and snapshots for cache keys (``next`` on a count is atomic in CPython)."""


@dataclass(eq=False)
class CompiledTail:
    """One schema's tail automaton in one form of the dialect (shared by every snapshot).

    Its lazy DFA numbers states in the order they are met, so a state number means something only
    with this object: caches key on ``serial``, never on ``key`` (a tail evicted and built again
    numbers its states differently).
    """

    key: tuple[str, int, bool]
    dfa: LazyDFA
    nfa_states: int
    next_call: bool = False
    """Whether the tail can hand over to another call (a list's separator): its states' distances
    may then lead into the next call."""
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
    threads; the caches are bounded (bytes, least recently used first) and locked. A cursor
    (:class:`~tooldec.decoding.Machine`) belongs to one sequence.

    Args:
        vocab: The model's vocabulary (padded to the logits' width if they are wider).
        dialect: How calls are written.
        tail_cache_bytes: Bound on the compiled tool automata (those a live snapshot uses stay
            pinned to it beyond the bound).
        mask_cache_bytes: Bound on cached masks (a packed mask is ``vocab.size / 8`` bytes: 19 KB
            at 151k tokens, so 32 MB keep about 1,700).
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
        """The vocabulary masks are computed over: the given one, with the dialect's markers
        spelled (``tooldec.tokens.markers``; the same ids and size)."""
        self.dialect = dialect
        self.index = prepare_vocabulary(vocab)
        self.openers = OpenerTables(self.index, dialect)
        for style in {dialect.form_style(form) for form in range(dialect.forms)}:
            prepare_values(style, self.index.longest)
        self._checks_tools = type(dialect).check_tool is not Dialect.check_tool
        self.key = hashlib.sha256(f"{vocab.fingerprint}\0{dialect.key}".encode()).hexdigest()[:24]
        self.tails: BoundedCache[tuple[str, int, bool], CompiledTail] = BoundedCache(tail_cache_bytes)
        # Tails still in use (pinned by a snapshot) after the bounded cache dropped them: one
        # automaton per key while anything holds it, so cursors and caches agree on state numbers.
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
        """Time spent preparing the vocabulary, the opener automata and the free-form value pieces
        (once per compiler)."""

    def kept(self, key: tuple[Any, ...], make: Callable[[], T], keep: Callable[[T], bool] | None = None) -> T:
        """A value kept beside the masks in their bounded cache (what budgets and name searches
        need), made on a miss; with ``keep``, a made value is stored only if it accepts it.
        ``key`` must name what the value depends on (snapshot serial, schema hash, ...)."""
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
        """An immutable snapshot of ``tools`` for this vocabulary and dialect.

        Args:
            tools: A ``ToolSet`` or anything it takes (functions, tool dicts, Pydantic models).

        Returns:
            The snapshot; the same object again for a tool list seen before (same names and
            schemas, any order), while it is in the snapshot cache.

        Raises:
            ToolRegistrationError: A tool cannot be made, a name is repeated, or the dialect
                cannot write calls to a tool (before anything is decoded).
        """
        from .grammar import Grammar

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
        """The dialect's checks of ``tool`` (cached by name and schema; nothing to do for a
        dialect without checks of its own)."""
        if not self._checks_tools:
            return
        key = (tool.name, tool.schema_hash)
        if self._checked.get(key) is None:
            self.dialect.check_tool(tool)
            self._checked.put(key, True)

    def inventory_key(self, tools: Mapping[str, Tool]) -> str:
        """Stable key of an inventory: vocabulary, dialect and every (name, schema hash), in any
        order (the key :meth:`compile` gives the same tools as a ``ToolSet``)."""
        return self._key_of(inventory_digest(sorted(tool.inventory_entry for tool in tools.values())))

    def _key_of(self, digest: str) -> str:
        """The snapshot key of an inventory digest, remembered for the last few hundred digests:
        right after a request's tool list is walked, a SHA-256 call costs tens of microseconds of
        cold OpenSSL code, a cache lookup a few."""
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

    def string_table(self, style: Style) -> StringTable:
        return string_table(self.index, style.syntax)


_SNAPSHOT_KEYS_KEPT = 256
"""Digests whose snapshot keys a compiler remembers (least recently used first out)."""
_SNAPSHOT_KEY_BYTES = 200
"""What the cache counts for one: two 64-character strings and their entry."""

_SHARED_LOCK = threading.Lock()
_SHARED: weakref.WeakKeyDictionary[Vocabulary, dict[str, weakref.ref[Compiler]]] = weakref.WeakKeyDictionary()
