"""A handful of tool schemas with every shape the engine treats specially (no benchmark data needed):
plain and bounded strings, patterns and formats, enums, bounded numbers, arrays with item bounds,
nested objects, optional properties, anyOf. And Hermes with every opener allowed to open a forced
call, for the tests that walk fenced and pretty-printed calls in required mode."""

from __future__ import annotations

from typing import Any

from tooldec.dialects import Hermes

EVERY_OPENER = Hermes(forced=[o.name for o in Hermes().openers()])
"""Hermes whose required and named calls may open with any opener (by default only the tag)."""

ZOO: list[dict[str, Any]] = [
    {"name": "get_weather", "description": "Weather in a city.", "parameters": {
        "type": "object", "properties": {
            "city": {"type": "string"},
            "days": {"type": "integer", "minimum": 1, "maximum": 14},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            "note": {"type": "string", "maxLength": 5}},
        "required": ["city"]}},
    {"name": "search_books", "description": "Find books.", "parameters": {
        "type": "object", "properties": {
            "query": {"type": "string", "minLength": 2, "maxLength": 300},
            "tags": {"type": "array", "items": {"type": "string", "maxLength": 12}, "minItems": 1, "maxItems": 3},
            "year": {"type": ["integer", "null"]}},
        "required": ["query", "tags"]}},
    {"name": "book_flight", "description": "Book a flight.", "parameters": {
        "type": "object", "properties": {
            "from": {"type": "string", "pattern": "^[A-Z]{3}$"},
            "to": {"type": "string", "pattern": "^[A-Z]{3}$"},
            "date": {"type": "string", "format": "date"},
            "passengers": {"type": "object", "properties": {
                "adults": {"type": "integer", "minimum": 1, "maximum": 9},
                "children": {"type": "integer", "minimum": 0, "maximum": 9}}, "required": ["adults"]}},
        "required": ["from", "to", "date", "passengers"]}},
    {"name": "add", "description": "Add numbers.", "parameters": {
        "type": "object", "properties": {"numbers": {"type": "array", "items": {"type": "number"}, "maxItems": 1000}},
        "required": ["numbers"]}},
    {"name": "set_alarm", "description": "Set an alarm.", "parameters": {
        "type": "object", "properties": {
            "time": {"anyOf": [{"type": "string", "format": "time"}, {"type": "integer", "minimum": 0, "maximum": 86399}]},
            "label": {"type": "string", "maxLength": 65535},
            "repeat": {"type": "boolean"}},
        "required": ["time"]}},
    {"name": "lookup", "description": "No arguments.", "parameters": {"type": "object", "properties": {}}},
]
