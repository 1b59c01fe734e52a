"""``LazyDFA.walk_classes`` (one compiled call up to a counter step) reads the same bytes to the same
state as :meth:`LazyDFA.next` byte by byte, stopping after an exit's byte or at a dead end: on the
zoo's tails, whose length-bounded strings and arrays have counters, and on an opener search; and
it says whether it stopped on an exit."""

from __future__ import annotations

import random

from decoding.tools_zoo import ZOO

from tooldec.automata.dfa import SINK, LazyDFA
from tooldec.automata.nfa import NFA
from tooldec.dialects import Hermes
from tooldec.dialects.watch import search_automaton
from tooldec.tools import Tool


def stepped(dfa: LazyDFA, sid: int, data: bytes) -> tuple[int, int, bool]:
    """The reference: :meth:`LazyDFA.next` byte by byte."""
    for i, byte in enumerate(data):
        sid = dfa.next(sid, byte)
        if sid == SINK or dfa.arrays.exits[sid]:
            return sid, i + 1, sid != SINK
    return sid, len(data), sid != SINK and bool(dfa.arrays.exits[sid])


def texts(dfa: LazyDFA, rng: random.Random, count: int) -> list[bytes]:
    """Strings of the language, their prefixes, and the same with a byte changed."""
    out = []
    for _ in range(count):
        text = dfa.sample(rng)
        cut = text[: rng.randrange(len(text) + 1)]
        out += [text, cut]
        if text:
            at = rng.randrange(len(text))
            out.append(text[:at] + bytes([rng.randrange(256)]) + text[at + 1:])
    return out


def test_a_compiled_walk_reads_what_next_reads() -> None:
    rng = random.Random(5)
    automata = []
    for spec in ZOO:
        nfa = NFA()
        automata.append(LazyDFA(nfa, Hermes().call_tail(nfa, Tool.coerce(spec), form=0, next_call=False), window=16))
    automata.append(search_automaton(Hermes()).search)
    walked = stopped = 0
    for dfa in automata:
        for text in texts(dfa, rng, 30):
            for start in {dfa.start, *(dfa.walk_classes(dfa.start, text[:k])[0] for k in (0, 1, 2, 5) if k <= len(text))}:
                if start == SINK:
                    continue
                got = dfa.walk_classes(start, text)
                assert got == stepped(dfa, start, text), (text, start)
                walked += 1
                stopped += got[1] < len(text)
    assert walked > 1000 and stopped > 50  # exits and dead ends both met
