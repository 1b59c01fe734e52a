"""Normalize a tool's JSON Schema to the exact subset the argument automaton enforces.

This module is the only judge of what a schema means and of what tooldec refuses. The contract:

* Anything :func:`normalize_schema` accepts, :mod:`tooldec.automata.json_schema` compiles without raising, within
  bounded size.
* Every instance that automaton admits validates with ``jsonschema`` (Draft 2020-12, format checker on) against the
  schema *as written* (docs/DESIGN.md, invariant 7): the normalized copy accepts a subset of what the original
  accepts (the documented restrictions below), never more.
* Unsatisfiable raises :class:`InvalidSchemaError`; what tooldec cannot write exactly, :class:`UnsupportedSchemaError`;
  too large, :class:`SchemaTooComplexError`; each names the tool, the JSON pointer and (the last two) the keyword.

How: a schema is the conjunction of its keywords (2019-09+ semantics, ``$ref`` siblings included). ``allOf``
branches, ``$ref`` targets and siblings are intersected keyword by keyword (:mod:`.schema_algebra`); ``anyOf`` has
the rest of its schema distributed into every branch; ``oneOf`` becomes an ``anyOf`` whose every value matches
exactly one branch as written (``Reader.one_of``, :mod:`.schema_outside`): a branch no value matches alone is
dropped, one for which tooldec finds no such value it can write is refused. ``dependentRequired``,
``dependencies`` and ``dependentSchemas`` become an ``anyOf`` per key; ``not`` is supported for a type, a
const/enum, ``required`` keys, boolean schemas and ``anyOf`` of those. References are resolved by one resolver
(:mod:`tooldec.automata.pointers`) and unrolled: one ``$ref`` is entered at most ``MAX_REF_DEPTH`` times inside its
own expansion (deeper is cut, as if ``false``; chains of distinct references have no limit). The output
(:mod:`.schema_core`) has no ``$ref``, ``$defs`` or combinator but ``anyOf``.

Documented restrictions (a subset of the valid values is written): an overlapping ``oneOf`` writes the values of
each branch that one of its ways out of the others describes (at most four per branch); a schema without ``type``
whose keywords concern only some types (``minLength``, ``properties``) allows only those; ``number`` with
``multipleOf`` is written as integers; ``nullable`` is read only from OpenAPI 3.0 (``openapi=True``). BFCL's
``dict``, ``float``, ``tuple``, ``any`` and draft-4 ``items`` lists are mapped. Annotations, unknown keywords and
formats ``jsonschema`` never checks (``int32``) constrain nothing and are dropped.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from tooldec.automata.gcpause import collector_paused
from tooldec.automata.pointers import join
from tooldec.automata.regex import FORMAT_PATTERNS
from tooldec.errors import InvalidSchemaError, SchemaTooComplexError
from tooldec.tools.schema_core import Schema, kinds
from tooldec.tools.schema_keywords import (
    ANNOTATION_KEYWORDS,
    MAX_DEPTH,
    MAX_REF_DEPTH,
    SUPPORTED_FORMATS,
    SUPPORTED_KEYWORDS,
    UNSUPPORTED_KEYWORDS,
)
from tooldec.tools.schema_plain import plain_form_cost
from tooldec.tools.schema_reader import Reader
from tooldec.tools.schema_size import MAX_STATES, check_size

__all__ = ["ANNOTATION_KEYWORDS", "MAX_DEPTH", "MAX_REF_DEPTH", "SUPPORTED_FORMATS", "SUPPORTED_KEYWORDS",
           "UNSUPPORTED_KEYWORDS", "normalize_any_schema", "normalize_schema", "prepare_formats"]


def normalize_schema(schema: Mapping[str, Any], *, tool: str, openapi: bool = False) -> dict[str, Any]:
    """Return the normalized copy of a tool's parameter schema (an object schema).

    Args:
        schema: The parameters as given (JSON Schema, possibly in a BFCL or OpenAPI dialect).
        tool: The tool's name, for error messages.
        openapi: The schema comes from an OpenAPI 3.0 document: ``nullable: true`` adds ``null``
            and a boolean ``exclusiveMinimum``/``exclusiveMaximum`` makes its bound exclusive.

    Returns:
        A new dict whose values are all objects (``"type": "object"``, or an ``anyOf`` of objects).

    Raises:
        UnsupportedSchemaError: A keyword (or keyword value) the compiler cannot enforce.
        SchemaTooComplexError: A schema whose automaton would exceed tooldec's size bounds.
        InvalidSchemaError: Not an object schema, not valid JSON Schema, or no value satisfies it.
    """
    if type(schema) is not dict and not isinstance(schema, Mapping):
        raise InvalidSchemaError(f"parameters must be an object schema, got {type(schema).__name__}", tool=tool)
    plain = _plain(schema)
    if plain is not None:  # an object schema by construction
        return plain
    out = _read(schema, tool, openapi=openapi)
    branches = out["anyOf"] if isinstance(out, dict) and set(out) == {"anyOf"} else [out]
    if not all(isinstance(b, dict) and kinds(b) == ["object"] for b in branches):
        if out is True and not {"type", "properties"} & set(schema):
            found = "neither 'type' nor 'properties'"
        elif isinstance(out, dict) and "type" in out:
            found = f"type {out['type']!r}"
        else:
            found = "a schema that allows other values than objects"
        raise InvalidSchemaError(f"parameters must be an object schema (type 'object'), found {found}", tool=tool)
    return cast(dict[str, Any], out)


def prepare_formats() -> None:
    """Build now the automata every supported ``format`` needs (kept for the process): ~50 ms in all that a server
    pays when it loads (``decoding.prepare_vocabulary``), not in its first request with a date. Thread-safe."""
    for name in FORMAT_PATTERNS:
        normalize_schema({"type": "object", "properties": {"value": {"type": "string", "format": name}}},
                         tool="(formats)")


def normalize_any_schema(schema: Any, *, tool: str | None = None, openapi: bool = False) -> Schema:
    """Normalize any JSON Schema, not only an object one (for schema corpora and nested use)."""
    if schema is False:
        raise InvalidSchemaError("no value satisfies this schema (the schema is false)", tool=tool)
    if schema is True:
        return True
    if not isinstance(schema, Mapping):
        raise InvalidSchemaError(f"a schema must be an object or a boolean, got {type(schema).__name__}", tool=tool)
    plain = _plain(schema)
    return plain if plain is not None else _read(schema, tool, openapi=openapi)


def _plain(schema: Mapping[str, Any]) -> dict[str, Any] | None:
    """Most tools: the reader's answer, written in a few microseconds (``None``: ask the reader)."""
    found = plain_form_cost(schema)
    return found[0] if found is not None and found[1] <= MAX_STATES else None


def _read(schema: Mapping[str, Any], tool: str | None, *, openapi: bool) -> Schema:
    with collector_paused():  # many small dicts, no garbage cycles (see automata.gcpause)
        _check_nesting(schema, tool)
        reader = Reader(schema, tool, openapi)
        out = reader.read(schema, "", (), 0)
        if out is False:
            pointer, reason = reader.algebra.reasons[0] if reader.algebra.reasons else ("", "the schema is false")
            raise InvalidSchemaError(f"no value satisfies this schema ({reason})", tool=tool, pointer=pointer)
        check_size(out, reader.algebra)
        return cast(Schema, _unshared(out))


def _check_nesting(schema: Any, tool: str | None) -> None:
    """Refuse documents nested deeper than the recursive passes can go, before they start. The pointer is spelled
    only for the error (one per node was a third of a typical registration)."""
    Entry = tuple[Any, int, Any]  # (node, depth, (parent entry, key) or None)
    stack: list[Entry] = [(schema, 0, None)]
    while stack:
        entry = stack.pop()
        node, depth, _ = entry
        if depth > 2 * MAX_DEPTH:
            tokens: list[str | int] = []
            link = entry[2]
            while link is not None:
                tokens.append(link[1] if isinstance(link[1], int) else str(link[1]))
                link = link[0][2]
            ptr = join("", *reversed(tokens))
            raise SchemaTooComplexError(
                f"the schema nests deeper than {MAX_DEPTH} subschemas", tool=tool, pointer=ptr,
                keyword=ptr.rsplit("/", 1)[-1].replace("~1", "/").replace("~0", "~"))
        if isinstance(node, dict):
            stack.extend([(v, depth + 1, (entry, k)) for k, v in node.items()])
        elif isinstance(node, list):
            stack.extend([(v, depth + 1, (entry, i)) for i, v in enumerate(node)])
        elif isinstance(node, Mapping):
            stack.extend([(v, depth + 1, (entry, k)) for k, v in node.items()])


def _unshared(schema: Any) -> Any:
    """A copy in which no dict or list appears twice (references were expanded by sharing)."""
    if isinstance(schema, dict):
        return {k: _unshared(v) for k, v in schema.items()}
    if isinstance(schema, list):
        return [_unshared(v) for v in schema]
    return schema
