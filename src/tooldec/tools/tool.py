"""``Tool``: the one normal form every tool definition is turned into.

Whatever a tool was written as (a function, a vendor dict, a Pydantic model, an OpenAPI operation), the rest of
tooldec sees a name, a description and a normalized parameter schema, all checked when the ``Tool`` is made
(docs/DESIGN.md, invariant 5).
"""

from __future__ import annotations

import copy
import functools
import hashlib
import marshal
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from jsonschema import Draft202012Validator

from tooldec.caches import BoundedCache
from tooldec.errors import InvalidToolNameError, ToolNotCallableError, ToolRegistrationError
from tooldec.tools.callables import Converter, argument_converters, function_schema
from tooldec.tools.dicts import dict_schema
from tooldec.tools.keys import dict_keys, value_key, value_keys
from tooldec.tools.schema import normalize_schema

if TYPE_CHECKING:
    from pydantic import BaseModel

__all__ = ["NAME_PATTERN", "Tool", "check_tool_name"]

#: Names carry no ``"``, ``(``, ``>``, space or newline, which the call formats rely on.
NAME_PATTERN = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-]{0,127}")
_NAME_RULE = "^[A-Za-z0-9_][A-Za-z0-9_.\\-]{0,127}$ (letters, digits, '_', '.', '-'; 1 to 128 characters; not starting with '.' or '-')"


def check_tool_name(name: object) -> str:
    """Return ``name`` if it is a valid tool name, else raise :class:`InvalidToolNameError`."""
    if not isinstance(name, str) or NAME_PATTERN.fullmatch(name) is None:
        raise InvalidToolNameError(
            f"{name!r} is not a valid tool name: it must match {_NAME_RULE}",
            tool=name if isinstance(name, str) else None)
    return name


_CHECKED_BY_PACKAGES = frozenset({"date-time", "time", "uri", "uri-reference", "hostname", "duration"})


def _format_checker() -> Any:
    """jsonschema's 2020-12 format checker, refused without the optional packages (tooldec's dependencies)
    whose absence would make it skip ``date-time``, ``uri``, ``hostname``... silently."""
    checker = Draft202012Validator.FORMAT_CHECKER
    missing = _CHECKED_BY_PACKAGES - set(checker.checkers)
    if missing:
        raise ImportError(
            f"jsonschema cannot check the formats {sorted(missing)}; install 'rfc3339-validator',"
            " 'rfc3986-validator', 'fqdn' and 'isoduration' (or jsonschema[format-nongpl])")
    return checker


class _Schemas:
    """A schema as written, read once: its normal form and hash, and its marshal bytes (the source for prompts),
    shared by every tool registered with an equal schema. Read-only once made. Slots, not a frozen dataclass:
    its ``__init__`` and ``__dict__`` were a tenth of the time of registering a tool list."""

    __slots__ = ("digest", "nbytes", "normalized", "source_read", "written")

    def __init__(self, normalized: dict[str, Any], digest: str, written: bytes, nbytes: int) -> None:
        self.normalized = normalized
        self.digest = digest
        self.written = written
        self.nbytes = nbytes
        self.source_read: dict[str, Any] | None = None

    @property
    def source(self) -> dict[str, Any]:
        """The schema as written, decoded on first read (most tools never show theirs). Threads reading it at
        once may decode it twice; both copies are equal."""
        found = self.source_read
        if found is None:
            found = self.source_read = cast(dict[str, Any], marshal.loads(self.written))
        return found


# Schemas read before by the schema as written, and tools by their dict, both keyed by marshal
# bytes (see :mod:`.keys`) and bounded by the bytes they hold.
_schemas: BoundedCache[bytes, _Schemas] = BoundedCache(8 * 2**20, sizer=lambda found: found.nbytes)


def _schema_key(written: bytes, openapi: bool) -> bytes:
    """The :data:`_schemas` key: the marshal bytes, behind a NUL (no marshal output starts with one) for an OpenAPI
    schema. Not a pair: a tool list stores hundreds of keys, and pairs are objects the collector walks."""
    return b"\0" + written if openapi else written
_dict_tools: BoundedCache[bytes, Tool] = BoundedCache(8 * 2**20)  # each stored with its key's length as its size


def _normalized(parameters: Any, tool: str, openapi: bool) -> tuple[dict[str, Any], _Schemas | None]:
    """The normalized schema and, where ``value_key`` can encode it, its shared read-only record, from a bounded
    cache: tools sharing schemas (a server's repeated tool list) pay the normalizer once per schema. Only
    successes are cached (errors name the tool). Thread-safe."""
    written = value_key(parameters)
    if written is None:
        return normalize_schema(parameters, tool=tool, openapi=openapi), None
    found = _schemas.get(_schema_key(written, openapi))
    if found is None:
        found = _schemas.put(_schema_key(written, openapi), _schemas_record(
            normalize_schema(parameters, tool=tool, openapi=openapi), written))
    return found.normalized, found


def _schemas_record(normalized: dict[str, Any], written: bytes, blob: bytes | None = None) -> _Schemas:
    """The shared record of a schema ``written`` (marshal bytes) of normal form ``normalized`` (marshal: ``blob``)."""
    blob = value_key(normalized) if blob is None else blob
    assert blob is not None  # the normal form holds JSON values only
    return _Schemas(normalized, hashlib.sha256(blob).hexdigest(), written, len(blob) + len(written))


def _attributes(name: str, description: str, parameters: Any, fn: Callable[..., Any] | None,
                given: dict[str, Any] | None, openapi: bool) -> dict[str, Any]:
    """A ``Tool``'s attributes from its fields as given: the name, description and function
    checked, the schema normalized (and hashed), the source a snapshot (see :class:`_Source`)."""
    check_tool_name(name)
    if type(description) is not str and not isinstance(description, str):
        raise ToolRegistrationError(f"description must be a string, got {type(description).__name__}", tool=name)
    if fn is not None and not callable(fn):
        raise ToolRegistrationError(f"fn must be callable, got {type(fn).__name__}", tool=name)
    normalized, schemas = _normalized(parameters, name, openapi)  # checks the nesting first
    if given is None and schemas is not None:
        source: Any = schemas  # the snapshot of the schema as written, decoded on first read
    else:
        source = given if given is not None else parameters
        source = copy.deepcopy(dict(source)) if isinstance(source, Mapping) else source
    return _fields(name, description, normalized, fn, source, openapi, schemas)


def _fields(name: str, description: str, normalized: dict[str, Any], fn: Callable[..., Any] | None, source: Any,
            openapi: bool, schemas: _Schemas | None) -> dict[str, Any]:
    """A ``Tool``'s ``__dict__`` from its checked parts (one place, for a tool made alone or in a list)."""
    found = {"name": name, "description": description, "parameters": normalized, "fn": fn, "_source": source,
             "openapi": openapi}
    if schemas is not None:  # what the cached properties would compute, set now: a set sorts the entries
        found["schema_hash"] = schemas.digest
        found["inventory_entry"] = f"{name}\0{schemas.digest}"
    return found


class _Source:
    """``Tool.source_parameters``: the schema given, or the shared snapshot of the schema as written (decoded late)."""

    def __get__(self, tool: Tool | None, owner: type | None = None) -> dict[str, Any] | None:
        if tool is None:
            return None  # the field's default
        found = tool.__dict__.get("_source")
        return found.source if type(found) is _Schemas else cast("dict[str, Any] | None", found)

    def __set__(self, tool: Tool, value: dict[str, Any] | None) -> None:
        tool.__dict__["_source"] = None if isinstance(value, _Source) else value  # the default is this object


def _tools_of_dicts(specs: Sequence[Mapping[str, Any]]) -> tuple[list[Tool], Exception | None]:
    """The ``Tool`` of each tool dict, as ``Tool.from_dict`` makes it, up to the first that fails, and that failure:
    made in passes, not a thousand trips through the caches (keys in one extension call, lookups and stores under
    one lock each, each new schema read once). A failure cuts the list where it happened, so later passes run over
    the dicts before it and the first error in the list's order is the one returned."""
    fields: list[tuple[str, str, Any]] = []
    failure: Exception | None = None
    try:
        for spec in specs:
            name, description, parameters = dict_schema(spec)
            if NAME_PATTERN.fullmatch(name) is None:
                check_tool_name(name)  # raises
            fields.append((name, description, parameters))
    except Exception as exc:  # raised in its turn by the caller
        failure = exc
    keys = value_keys([parameters for _, _, parameters in fields])
    unique = list(dict.fromkeys(key for key in keys if key is not None))
    records = dict(zip(unique, _schemas.get_many(unique)))  # JSON Schema's keys are the bytes (see _schema_key)
    read: dict[bytes, dict[str, Any]] = {}  # the new schemas' normal forms, by their keys
    odd: dict[int, dict[str, Any]] = {}  # the attributes of tools whose schema marshal cannot write
    i = 0
    try:
        for i, ((name, description, parameters), key) in enumerate(zip(fields, keys)):
            if key is None:
                odd[i] = _attributes(name, description, parameters, None, None, False)
            elif records[key] is None and key not in read:
                read[key] = normalize_schema(parameters, tool=name)
    except Exception as exc:
        failure, fields = exc, fields[:i]
    if read:
        made = [_schemas_record(normalized, key, blob)
                for (key, normalized), blob in zip(read.items(), value_keys(list(read.values())))]
        records.update(zip(read, _schemas.put_many([(record.written, record) for record in made])))
    tools: list[Tool] = []
    for i, ((name, description, _), key) in enumerate(zip(fields, keys)):
        tool = object.__new__(Tool)
        if key is None:
            tool.__dict__.update(odd[i])
        else:
            record = records[key]
            assert record is not None  # read above
            tool.__dict__.update(_fields(name, description, record.normalized, None, record, False, record))
        tools.append(tool)
    return tools, failure


@dataclass(frozen=True, eq=False)
class Tool:
    """A tool: name, description, normalized parameter schema, and optionally the function.

    Args:
        name: Matches ``^[A-Za-z0-9_][A-Za-z0-9_.\\-]{0,127}$``.
        description: What the tool does, for prompts.
        parameters: JSON Schema of the arguments object; stored normalized (``normalize_schema``).
        fn: Runs the tool; ``None`` for tools known only by their schema.
        source_parameters: The schema as given (with its descriptions, for prompts); defaults to ``parameters``
            before normalization. Both schemas are read-only: tools with equal schemas share them.
        openapi: The schema comes from an OpenAPI 3.0 document, whose ``nullable`` and boolean
            ``exclusiveMinimum``/``exclusiveMaximum`` are read (keyword only).

    Raises:
        InvalidToolNameError: A bad name.
        UnsupportedSchemaError: A schema keyword the decoder cannot enforce.
        InvalidSchemaError: An invalid schema or one no arguments can satisfy.

    Examples:
        >>> def add(a: int, b: int = 0) -> int:
        ...     '''Add two integers.'''
        ...     return a + b
        >>> tool = Tool.from_function(add)
        >>> tool.name, tool.description
        ('add', 'Add two integers.')
        >>> tool.parameters
        {'type': 'object', 'properties': {'a': {'type': 'integer'}, 'b': {'type': 'integer'}}, 'required': ['a']}
        >>> tool.validate_arguments({"a": "one"})
        ["at /a: 'one' is not of type 'integer'"]
        >>> tool(a=2, b=3)
        5
        >>> Tool.from_dict({"type": "function", "function": {"name": "math.factorial",
        ...     "parameters": {"type": "dict", "properties": {"n": {"type": "integer"}}}}}).parameters
        {'type': 'object', 'properties': {'n': {'type': 'integer'}}}
    """

    name: str
    description: str
    parameters: dict[str, Any]
    fn: Callable[..., Any] | None = None
    source_parameters: _Source = field(default=_Source(), repr=False)
    openapi: bool = field(default=False, repr=False, kw_only=True)

    def __post_init__(self) -> None:
        self.__dict__.update(_attributes(self.name, self.description, self.parameters, self.fn,
                                         self.source_parameters, self.openapi))


    @functools.cached_property
    def schema_hash(self) -> str:
        """SHA-256 of the normalized schema's marshal bytes (key order kept: arguments are written in it; ``1``,
        ``1.0`` and ``True`` differ). An in-process key: marshal's format may change between Python versions."""
        return hashlib.sha256(marshal.dumps(self.parameters, 2)).hexdigest()

    @functools.cached_property
    def inventory_entry(self) -> str:
        """``name``, NUL, ``schema_hash``: an inventory key's entry for this tool, sorting as the name does (names
        are ASCII, and NUL sorts before every name byte)."""
        return f"{self.name}\0{self.schema_hash}"

    @functools.cached_property
    def _validator(self) -> Draft202012Validator:
        return Draft202012Validator(self.parameters, format_checker=_format_checker())

    def validate_arguments(self, arguments: Mapping[str, Any]) -> list[str]:
        """Every way ``arguments`` break the schema (formats included), ``[]`` when valid.

        Returns:
            One message per error, prefixed with the JSON pointer of the bad value.
        """
        errors = sorted(self._validator.iter_errors(arguments), key=lambda e: [str(p) for p in e.absolute_path])
        return [f"at /{'/'.join(str(p) for p in e.absolute_path)}: {e.message}" for e in errors]

    @functools.cached_property
    def _converters(self) -> dict[str, Converter]:
        return argument_converters(self.fn) if self.fn is not None else {}

    def __getstate__(self) -> dict[str, Any]:
        """The fields and hashes; the validator and converters are rebuilt on use (a validator
        that has resolved a reference holds local functions, which do not pickle)."""
        state = {k: v for k, v in self.__dict__.items() if k not in ("_validator", "_converters")}
        state["_source"] = self.source_parameters  # the dict, not the shared record
        return state

    def __call__(self, **arguments: Any) -> Any:
        """Run the function with each argument converted to its parameter's annotated type (a JSON object to the
        dataclass or Pydantic model, a string to the Enum member, an array to the set or tuple). Raises
        :class:`ToolNotCallableError` without a function, ``ValueError`` (a Pydantic one too) for a bad value."""
        if self.fn is None:
            raise ToolNotCallableError(f"tool {self.name!r} has no function to run (it was made from a schema)")
        converters = self._converters
        typed = {name: converters[name](value) if name in converters else value for name, value in arguments.items()}
        return self.fn(**typed)

    @classmethod
    def from_function(cls, fn: Callable[..., Any], *, name: str | None = None,
                      description: str | None = None) -> Tool:
        """A tool from a typed function and its Google-style docstring (see ``callables``)."""
        fn_name, fn_description, parameters = function_schema(fn)
        return cls(name if name is not None else fn_name,
                   description if description is not None else fn_description, parameters, fn)

    @classmethod
    def from_dict(cls, spec: Mapping[str, Any]) -> Tool:
        """A tool from an OpenAI (Chat Completions or Responses), MCP, Anthropic or plain dict. Equal dicts (same
        types, same key order) give the same ``Tool`` (a bounded cache): treat its schemas as read-only."""
        return cls._from_dict(spec, value_key(spec) if cls is Tool else None)

    @classmethod
    def _from_dict(cls, spec: Mapping[str, Any], key: bytes | None) -> Tool:
        """``from_dict`` with the dict's ``value_key`` made already (``None``: not cached). Equal dicts share one
        ``Tool``: a server's repeated tool list costs one encoding and a lookup per tool. Thread-safe."""
        found = _dict_tools.get(key) if key is not None else None
        if found is not None:
            return found
        name, description, parameters = dict_schema(spec)  # the tool keeps neither the dict nor its schema
        if cls is not Tool:
            tool = cls(name, description, cast(dict[str, Any], parameters))
        else:  # without the dataclass __init__'s assignments: a registration makes thousands
            tool = object.__new__(cls)
            tool.__dict__.update(_attributes(name, description, parameters, None, None, False))
        return tool if key is None else _dict_tools.put(key, tool, len(key))  # the first one stored wins a race

    @classmethod
    def from_pydantic(cls, model: type[BaseModel], *, name: str | None = None,
                      description: str | None = None, fn: Callable[..., Any] | None = None) -> Tool:
        """A tool whose arguments are the fields of a Pydantic model (nested models in ``$defs``), named after the
        class and described by its docstring by default; ``fn`` is called with the fields by keyword."""
        parameters = model.model_json_schema()
        default_description = parameters.get("description", "") if isinstance(parameters.get("description"), str) else ""
        return cls(name if name is not None else model.__name__,
                   description if description is not None else default_description, parameters, fn)

    @classmethod
    def dict_keys(cls, objs: Sequence[object]) -> list[bytes | None]:
        """Each plain tool dict's cache key, its ``marshal`` bytes (``None`` for anything else, and
        for subclasses, which may read a dict otherwise): what :meth:`coerce_all` looks tools up by."""
        return dict_keys(objs) if cls is Tool else [None] * len(objs)

    @classmethod
    def coerce_all(cls, objs: Iterable[object], keys: Sequence[bytes | None] | None = None) -> Iterator[Tool]:
        """``coerce`` of each of ``objs`` in turn, the tool dicts' keys made in one pass (or given: ``dict_keys``
        of ``objs``) and looked up under one lock. Those not found are made as a batch (:func:`_tools_of_dicts`)
        up to the first that fails, whose error is raised in its turn, where ``coerce`` would have raised it."""
        objs = list(objs)
        keys = cls.dict_keys(objs) if keys is None or cls is not Tool else keys  # a subclass's keys are None
        found = _dict_tools.get_many([key for key in keys if key is not None])
        missed: list[tuple[bytes, Mapping[str, Any]]] = []
        hits = iter(found)
        for obj, key in zip(objs, keys):
            if key is not None and next(hits) is None:
                missed.append((key, obj))  # type: ignore[arg-type]  # a key is made of dicts only
        made, failure = _tools_of_dicts([spec for _, spec in missed]) if missed else ([], None)
        stored = iter(_dict_tools.put_many([(key, tool) for (key, _), tool in zip(missed, made)],
                                           [len(key) for key, _ in missed[: len(made)]]))
        hits_in_turn = iter(found)
        for obj, key in zip(objs, keys):
            if key is None:
                yield cls.coerce(obj)
                continue
            known = next(hits_in_turn)
            if known is not None:
                yield known
                continue
            one = next(stored, None)  # one object per dict: the one stored first wins
            if one is None:
                assert failure is not None  # made up to the first failure, which is this dict's
                raise failure
            yield one

    @classmethod
    def coerce(cls, obj: object) -> Tool:
        """Any supported tool definition as a ``Tool`` (a ``Tool`` is returned as it is).

        Raises:
            ToolRegistrationError: ``obj`` is none of: Tool, Pydantic model class, dict, callable.
        """
        if isinstance(obj, Tool):
            return obj
        pydantic = sys.modules.get("pydantic")  # a model class exists only if pydantic is imported
        if pydantic is not None and isinstance(obj, type) and issubclass(obj, pydantic.BaseModel):
            return cls.from_pydantic(obj)
        if isinstance(obj, Mapping):
            return cls.from_dict(obj)
        if callable(obj):
            return cls.from_function(obj)
        raise ToolRegistrationError(
            f"cannot make a tool from {type(obj).__name__}: pass a Tool, a function, a tool dict"
            " (OpenAI, MCP, Anthropic, plain) or a Pydantic model class")
