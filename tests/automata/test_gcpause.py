"""The collector pause around grammar builds nests, belongs to the thread that started it, and
leaves the collector as it found it."""

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
    """A build in another thread while one thread's pause runs leaves the collector to that pause."""
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


def test_the_first_pause_ends_the_off_time() -> None:
    """When the thread that switched the collector off is done, it is on again, even while
    another thread's (overlapping) pause still runs: overlapping builds never keep it off."""
    first_in, second_in, release = threading.Event(), threading.Event(), threading.Event()

    def second() -> None:
        first_in.wait()
        with collector_paused():
            second_in.set()
            release.wait()

    other = threading.Thread(target=second)
    other.start()
    with collector_paused():
        first_in.set()
        second_in.wait()
    assert gc.isenabled()  # the second thread is still inside its pause
    release.set()
    other.join()
    assert gc.isenabled()


def test_an_error_inside_ends_the_pause() -> None:
    try:
        with collector_paused():
            raise ValueError("boom")
    except ValueError:
        pass
    assert gc.isenabled()
