"""Every string a format's grammar allows passes jsonschema's format check (found by
JSONSchemaBench: year 0000 is not a date for Python)."""

from __future__ import annotations

import datetime
import random
import re

import jsonschema
import pytest

from tooldec.automata.regex import FORMAT_PATTERNS


def test_date_grammar_is_exactly_the_calendar() -> None:
    date = re.compile(FORMAT_PATTERNS["date"] + r"\Z")
    years = [*range(30), *range(390, 410), *range(1890, 1910), *range(1995, 2005), 9999]
    for year in years:
        for month in range(14):
            for day in range(33):
                text = f"{year:04d}-{month:02d}-{day:02d}"
                try:
                    datetime.date.fromisoformat(text)
                    real = True
                except ValueError:
                    real = False
                assert bool(date.match(text)) is real, text


@pytest.mark.parametrize("name", sorted(FORMAT_PATTERNS))
def test_format_samples_pass_the_format_checker(name: str) -> None:
    """Random strings drawn from the format's automaton all pass the checker."""
    from tooldec.automata.dfa import LazyDFA
    from tooldec.automata.json_schema import SchemaCompiler
    from tooldec.automata.nfa import NFA

    nfa = NFA()
    schema = {"type": "string", "format": name}
    dfa = LazyDFA(nfa, SchemaCompiler(nfa, schema).value(schema))
    checker = jsonschema.Draft202012Validator(schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)
    rng = random.Random(name)
    for _ in range(300):
        out = dfa.sample(rng, 60)
        value = out.decode()[1:-1]
        assert checker.is_valid(value), value
