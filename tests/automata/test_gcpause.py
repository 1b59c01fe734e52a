"""The collector pause around grammar builds nests, overlaps between threads, and leaves the
collector as it found it."""

from __future__ import annotations

import gc
import threading

from tooldec.automata.dfa import LazyDFA
from tooldec.automata.gcpause import collector_paused
from tooldec.automata.json_schema import SchemaCompiler
from tooldec.automata.nfa import NFA
from tooldec.tools.schema import normalize_any_schema


def _compile() -> LazyDFA:
    schema = normalize_any_schema({"type": "object", "properties": {"a": {}, "b": {"type": "string", "format": "date"}}})
    nfa = NFA()
    return LazyDFA(nfa, SchemaCompiler(nfa, schema if isinstance(schema, dict) else {}).value(schema))


def test_nested_pauses_restore_the_collector() -> None:
    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the outer pause still runs
    assert gc.isenabled()
    _compile()
    assert gc.isenabled()


def test_a_disabled_collector_stays_disabled() -> None:
    gc.disable()
    try:
        _compile()
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_overlapping_builds_in_threads() -> None:
    inside, release = threading.Barrier(2), threading.Event()
    states: list[bool] = []

    def hold() -> None:
        with collector_paused():
            inside.wait()
            release.wait()

    holder = threading.Thread(target=hold)
    holder.start()
    inside.wait()
    _compile()  # ends while the other thread's pause runs: the collector stays off
    states.append(gc.isenabled())
    release.set()
    holder.join()
    states.append(gc.isenabled())
    assert states == [False, True]


def test_an_error_inside_ends_the_pause() -> None:
    try:
        with collector_paused():
            raise ValueError("boom")
    except ValueError:
        pass
    assert gc.isenabled()
