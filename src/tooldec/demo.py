"""The demo's tools and questions: typed functions whose docstrings describe them, all
``Tool.from_function`` needs."""

from __future__ import annotations

from typing import Literal

__all__ = ["QUESTIONS", "TOOLS", "add", "convert_units", "country_fact", "multiply"]

Unit = Literal["km", "mi", "m", "ft", "kg", "lb", "celsius", "fahrenheit"]

_TO_BASE: dict[str, tuple[str, float]] = {
    "km": ("m", 1000.0), "mi": ("m", 1609.344), "m": ("m", 1.0), "ft": ("m", 0.3048),
    "kg": ("kg", 1.0), "lb": ("kg", 0.45359237),
}

_COUNTRIES: dict[str, dict[str, str | int]] = {
    "France": {"capital": "Paris", "population": 68_170_000, "currency": "euro"},
    "Japan": {"capital": "Tokyo", "population": 124_500_000, "currency": "yen"},
    "Brazil": {"capital": "Brasília", "population": 203_100_000, "currency": "real"},
    "Kenya": {"capital": "Nairobi", "population": 52_400_000, "currency": "Kenyan shilling"},
    "Canada": {"capital": "Ottawa", "population": 40_100_000, "currency": "Canadian dollar"},
}


def add(a: float, b: float) -> float:
    """Add two numbers.

    Args:
        a: The first number.
        b: The second number.
    """
    return a + b


def multiply(a: float, b: float) -> float:
    """Multiply two numbers.

    Args:
        a: The first factor.
        b: The second factor.
    """
    return a * b


def convert_units(value: float, from_unit: Unit, to_unit: Unit) -> float:
    """Convert a length, a mass or a temperature from one unit to another.

    Args:
        value: The amount to convert.
        from_unit: The unit of the amount.
        to_unit: The unit wanted.
    """
    if {from_unit, to_unit} <= {"celsius", "fahrenheit"}:
        celsius = value if from_unit == "celsius" else (value - 32) * 5 / 9
        return round(celsius if to_unit == "celsius" else celsius * 9 / 5 + 32, 4)
    if from_unit in ("celsius", "fahrenheit") or to_unit in ("celsius", "fahrenheit"):
        raise ValueError(f"cannot convert {from_unit} to {to_unit}")
    (base_from, factor_from), (base_to, factor_to) = _TO_BASE[from_unit], _TO_BASE[to_unit]
    if base_from != base_to:
        raise ValueError(f"cannot convert {from_unit} (a {'length' if base_from == 'm' else 'mass'}) to {to_unit}")
    return round(value * factor_from / factor_to, 4)


def country_fact(country: Literal["France", "Japan", "Brazil", "Kenya", "Canada"],
                 fact: Literal["capital", "population", "currency"]) -> str | int:
    """Look up the capital, population or currency of a country.

    Args:
        country: The country.
        fact: Which fact to look up.
    """
    return _COUNTRIES[country][fact]


TOOLS = [multiply, add, convert_units, country_fact]
"""The demo's tools, in the order the prompt lists them (SmolLM2 picks the first listed
arithmetic tool more often, so ``multiply`` comes before ``add``)."""

QUESTIONS = [
    "Multiply 1234 by 5678.",
    "What is the population of Japan?",
    "What is 18.5 plus 23.75?",
]
"""The demo's questions. SmolLM2-135M is small: asked "What is 1234 multiplied by 5678?" it calls
``add(123, 567)``, and it converts units with ``multiply``; tooldec makes calls valid, not wise."""
