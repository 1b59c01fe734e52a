"""Reading calls written as JSON objects, in every form a dialect declares, and counting the rest.

The text is scanned left to right; a span that became a call is not read again, so a tagged call
is not also counted as a bare object.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["NAME_KEY", "NAME_OBJECT", "WS", "JsonForm", "scan_json_calls"]

_DECODER = json.JSONDecoder()
WS = r"[ \t\r\n]*"
"""JSON whitespace, as the openers take it."""
NAME_KEY = r'\{' + WS + r'"name"'
"""``{"name"``: where an object opener commits (the key's closing quote), ``:`` or not."""
NAME_OBJECT = re.compile(r'\{' + WS + r'"name(?:"|(?![A-Za-z0-9_-]))')
"""An object whose first key is ``"name"``, or begins as one and cannot be another key
(``{"name}``): call-like text, what an object opener commits at or refuses."""


@dataclass(frozen=True)
class JsonForm:
    """One way a JSON call object is written: ``start`` matches up to the object's ``{``, ``end``
    what must follow it (``lenient_end``: unless the text ends), ``make`` reads a wrapped one.

    A capturing group in ``start`` marks the text that commits to a call: a failed occurrence
    resumes the scan past it (or past the JSON value there), so it is counted once.
    """

    start: re.Pattern[str]
    end: re.Pattern[str] | None = None
    lenient_end: bool = False
    list_of_calls: bool = False
    make: Callable[[Any], Any | None] | None = None


def scan_json_calls(text: str, forms: Sequence[JsonForm], make: Callable[[Any], Any | None],
                    ) -> tuple[list[Any], list[str]]:
    """``(calls, broken)``: every call object in ``text`` in any of ``forms`` (the first listed
    wins a tie), and each form occurrence or ``"name"`` object that became no call (200 characters)."""
    calls: list[Any] = []
    broken: list[str] = []
    spans: list[tuple[int, int]] = []  # calls read, and form occurrences that failed
    pos = 0
    while pos < len(text):
        best = None
        for form in forms:
            match = form.start.search(text, pos)
            if match is not None and (best is None or match.start() < best[0].start()):
                best = (match, form)
        if best is None:
            break
        match, form = best
        found, end = _read(text, match.end(), form, form.make or make)
        if found is None:
            broken.append(text[match.start():match.start() + 200])
            skip = _past_failed(text, match)
            spans.append((match.start(), skip))
            pos = skip  # not again as another form (a bare object inside a bad tag)
            continue
        calls.extend(found)
        if form.list_of_calls:  # the items of a list that are not calls count as broken ones
            whole = _DECODER.raw_decode(text, len(text) - len(text[match.end():].lstrip(" \t\r\n")))[0]
            if isinstance(whole, list):
                broken += [json.dumps(item)[:200] for item in whole if (form.make or make)(item) is None]
        spans.append((match.start(), end))
        pos = end
    for match in NAME_OBJECT.finditer(text):
        if not any(a <= match.start() < b for a, b in spans):
            broken.append(text[match.start():match.start() + 200])
    return calls, broken


def _past_failed(text: str, match: re.Match[str]) -> int:
    """Where the scan resumes after a failed occurrence, so that it counts once: past its JSON
    value when one decodes there, else past the committing text."""
    at = match.end()
    while at < len(text) and text[at] in " \t\r\n":
        at += 1
    committed = match.end(1) if match.re.groups and match.start(1) >= 0 else at + 1
    try:
        end = _DECODER.raw_decode(text, at)[1]
    except json.JSONDecodeError:
        end = 0
    return max(end, committed, match.start() + 1)


def _read(text: str, at: int, form: JsonForm, make: Callable[[Any], Any | None]) -> tuple[list[Any] | None, int]:
    """Decode the object (or list) at ``at`` and check the form's end; ``(None, at)`` if it is not a call."""
    while at < len(text) and text[at] in " \t\r\n":
        at += 1
    try:
        value, end = _DECODER.raw_decode(text, at)
    except json.JSONDecodeError:
        return None, at
    items = value if form.list_of_calls and isinstance(value, list) else [value]
    made = [m for m in (make(item) for item in items) if m is not None]
    if not made or (not form.list_of_calls and len(made) != len(items)):
        return None, at
    if form.end is not None:
        closing = form.end.match(text, end)
        if closing is not None:
            end = closing.end()
        elif not (form.lenient_end and not text[end:].strip()):
            return None, at
    return made, end
