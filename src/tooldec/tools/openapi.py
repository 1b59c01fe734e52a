"""Every operation of an OpenAPI 3 document as a tool (RestBench's TMDB and Spotify APIs).

An operation's path, query and header parameters and the properties of its JSON request body become one flat
arguments object, because the model writes one call with named arguments; :class:`Operation` keeps where each goes
in the HTTP request, for ``tooldec.sources.http`` (this module does no HTTP). Of two inputs with one name, the
later one gets its location as a suffix (``ids`` and ``ids_body``). A document not shaped as OpenAPI says raises a
``ToolRegistrationError`` naming the operation.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from tooldec.errors import ToolRegistrationError
from tooldec.tools.tool import Tool

__all__ = ["Argument", "Operation", "openapi_operations", "server_urls", "tools_from_openapi"]

Naming = Literal["operation_id", "method_path"]
Location = Literal["path", "query", "header", "body"]

_METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
_COMPONENT_SCHEMA = "#/components/schemas/"
# Keywords whose value is a boolean; YAML-to-JSON converters sometimes write them as strings.
_BOOLEAN_KEYWORDS = frozenset({"required", "nullable", "uniqueItems", "deprecated", "readOnly", "writeOnly"})
_NUMBER_KEYWORDS = frozenset({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
                              "minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties"})
_VALUE_KEYWORDS = frozenset({"enum", "const", "default", "example", "examples"})  # JSON values, not schemas


@dataclass(frozen=True)
class Argument:
    """Where one argument of an operation's tool goes in the HTTP request: its ``location``, its ``name`` there
    (``""``: the whole non-object JSON body), and for a query array whether it ``explode``s into one ``name=value``
    per item (OpenAPI's default) rather than one comma-separated value."""

    location: Location
    name: str
    explode: bool = True


@dataclass(frozen=True)
class Operation:
    """One OpenAPI operation and its tool (no ``fn``): the upper-case method, the path template, where each
    argument goes, the base URLs (its own ``servers``, else its path's, else the document's), and the security
    schemes it names (``()``: it needs none; ``None``: the document does not say)."""

    tool: Tool
    method: str
    path: str
    arguments: Mapping[str, Argument]
    servers: tuple[str, ...] = ()
    security: tuple[str, ...] | None = field(default=None)

    @property
    def locations(self) -> dict[str, Location]:
        """Argument name -> ``path``, ``query``, ``header`` or ``body``."""
        return {name: argument.location for name, argument in self.arguments.items()}


def tools_from_openapi(spec: Mapping[str, Any], *, naming: Naming = "operation_id",
                       names: Mapping[str, str] | None = None) -> list[Tool]:
    """One tool per operation of an OpenAPI 3 document, in document order.

    Args:
        spec: The parsed OpenAPI document.
        naming: ``"operation_id"`` uses each ``operationId`` (made a valid name) and falls back to
            method + path; ``"method_path"`` always writes the name from method and path, e.g.
            ``GET /movie/{movie_id}/credits`` -> ``get_movie_movie_id_credits``.
        names: Names chosen elsewhere, by ``"METHOD /path"`` (``"GET /movie/{movie_id}/credits"``);
            they win over ``naming`` (made valid and unique the same way). ``tooldec.runtime.naming``
            writes them from the operations' documentation with a local model.

    Raises:
        ToolRegistrationError: A parameter or body reference that does not resolve, or an
            operation schema the decoder cannot enforce (the error names the tool).
    """
    return [operation.tool for operation in openapi_operations(spec, naming=naming, names=names)]


def openapi_operations(spec: Mapping[str, Any], *, naming: Naming = "operation_id",
                       names: Mapping[str, str] | None = None) -> list[Operation]:
    """Like :func:`tools_from_openapi`, with each operation's method, path and argument locations."""
    if naming not in ("operation_id", "method_path"):
        raise ValueError(f"naming must be 'operation_id' or 'method_path', got {naming!r}")
    if not isinstance(spec, Mapping):
        raise ToolRegistrationError(f"an OpenAPI document is a JSON object, got {type(spec).__name__}")
    used: set[str] = set()
    operations = []
    for path, method, item, op in _iter_operations(spec):
        base = _sanitize(op["operationId"]) if naming == "operation_id" and isinstance(op.get("operationId"), str) else ""
        base = _sanitize((names or {}).get(f"{method.upper()} {path}", "")) or base
        name = _unique(base or _method_path_name(method, path), used)
        parameters, arguments = _arguments(spec, path, item, op, name)
        description = "\n\n".join(str(op[k]).strip() for k in ("summary", "description") if op.get(k))
        tool = Tool(name, description, parameters, openapi=True)
        servers = server_urls(op) or server_urls(item) or server_urls(spec)
        operations.append(Operation(tool, method.upper(), path, arguments, servers, _security(spec, op)))
    return operations


def server_urls(node: Mapping[str, Any]) -> tuple[str, ...]:
    """The URLs of a ``servers`` list (of a document, path item or operation), variables at their defaults.

    Examples:
        >>> server_urls({"servers": [{"url": "https://{region}.example.com/v1",
        ...                           "variables": {"region": {"default": "eu"}}}]})
        ('https://eu.example.com/v1',)
    """
    urls = []
    for server in node.get("servers") or ():
        if isinstance(server, Mapping) and isinstance(server.get("url"), str):
            url = server["url"]
            for variable, spec in (server.get("variables") or {}).items():
                if isinstance(spec, Mapping) and "default" in spec:
                    url = url.replace("{" + str(variable) + "}", str(spec["default"]))
            urls.append(url)
    return tuple(urls)


def _security(spec: Mapping[str, Any], op: Mapping[str, Any]) -> tuple[str, ...] | None:
    requirements = op.get("security", spec.get("security"))
    if not isinstance(requirements, list):
        return None
    names = [str(name) for requirement in requirements if isinstance(requirement, Mapping) for name in requirement]
    return tuple(dict.fromkeys(names))


def _iter_operations(spec: Mapping[str, Any]) -> Iterator[tuple[str, str, Mapping[str, Any], Mapping[str, Any]]]:
    paths = spec.get("paths")
    if paths is None:
        return
    if not isinstance(paths, Mapping):
        raise ToolRegistrationError(
            f"the document's 'paths' must be an object of path -> path item, got {type(paths).__name__}")
    for path, item in paths.items():
        if not isinstance(item, Mapping):
            raise ToolRegistrationError(f"path {path!r}: a path item must be an object, got {type(item).__name__}")
        for method in item:
            if method in _METHODS:
                if not isinstance(item[method], Mapping):
                    raise ToolRegistrationError(
                        f"{method.upper()} {path}: an operation must be an object, got {type(item[method]).__name__}")
                yield path, method, item, item[method]


def _sanitize(name: str) -> str:
    """An operationId as a tool name: other characters become ``_``; at most 128 characters."""
    name = re.sub(r"[^A-Za-z0-9_.\-]", "_", name)
    return re.sub(r"^[.\-]", "_", name)[:128]


def _method_path_name(method: str, path: str) -> str:
    words = re.findall(r"[A-Za-z0-9]+", path)
    return "_".join([method.lower(), *words])[:128]


def _unique(name: str, used: set[str]) -> str:
    candidate, n = name, 1
    while candidate in used:
        n += 1
        suffix = f"_{n}"
        candidate = name[: 128 - len(suffix)] + suffix
    used.add(candidate)
    return candidate


def _declared_parameters(spec: Mapping[str, Any], path: str, item: Mapping[str, Any], op: Mapping[str, Any],
                         tool: str) -> list[Mapping[str, Any]]:
    """The path item's and the operation's parameters (the operation's win); cookies are the client's business."""
    declared: dict[tuple[str, str], Mapping[str, Any]] = {}
    for owner, node in (("path item", item), ("operation", op)):
        raw_list = node.get("parameters", [])
        if not isinstance(raw_list, list):
            raise ToolRegistrationError(f"the {owner}'s 'parameters' must be a list, got {type(raw_list).__name__}",
                                        tool=tool)
        for i, raw in enumerate(raw_list):
            param = _deref(spec, raw, tool)
            where, name = param.get("in"), param.get("name")
            if not isinstance(name, str) or not name:
                raise ToolRegistrationError(f"parameter {i} of the {owner} has no name", tool=tool)
            if where not in ("path", "query", "header", "cookie"):
                raise ToolRegistrationError(
                    f"parameter {name!r}: 'in' must be path, query, header or cookie, got {where!r}", tool=tool)
            declared[(where, name)] = param
    for name in re.findall(r"\{([^}/]+)\}", path):
        if ("path", name) not in declared:
            raise ToolRegistrationError(f"the path {path!r} has {{{name}}}, which no path parameter declares", tool=tool)
    return [param for (where, _), param in declared.items() if where != "cookie"]


def _arguments(spec: Mapping[str, Any], path: str, item: Mapping[str, Any], op: Mapping[str, Any],
               tool: str) -> tuple[dict[str, Any], dict[str, Argument]]:
    """The arguments object schema of one operation and where each argument goes."""
    properties: dict[str, Any] = {}
    required: list[str] = []
    arguments: dict[str, Argument] = {}

    def add(name: str, schema: Any, argument: Argument, is_required: bool) -> None:
        key = name
        if key in properties:  # the same name in two places: the later one says where it goes
            key = _unique(f"{name}_{argument.location}", set(properties))
            if isinstance(schema, dict) and "$ref" not in schema:
                where = "request body property" if argument.location == "body" else f"{argument.location} parameter"
                schema = {**schema, "description": f"({where} {name!r}) {schema.get('description', '')}".strip()}
        properties[key], arguments[key] = schema, argument
        if is_required:
            required.append(key)

    for param in _declared_parameters(spec, path, item, op, tool):
        where: Location = param["in"]
        name = param["name"]
        explode = _truthy(param.get("explode", param.get("style", "form") == "form"))
        add(name, _param_schema(param), Argument(where, name, explode), where == "path" or _truthy(param.get("required")))
    body = _deref(spec, op["requestBody"], tool) if isinstance(op.get("requestBody"), Mapping) else None
    schema = _json_body_schema(body) if body is not None else None
    if schema is not None:
        resolved = _deref(spec, schema, tool)
        body_required = _truthy(body.get("required")) if body is not None else False
        if isinstance(resolved.get("properties"), Mapping):
            wanted = resolved.get("required") or []
            for name, sub in resolved["properties"].items():
                add(str(name), copy.deepcopy(sub), Argument("body", str(name)), body_required and name in wanted)
        else:
            add("body", copy.deepcopy(schema), Argument("body", ""), body_required)
    parameters: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        parameters["required"] = required
    defs = _copy_component_schemas(spec, parameters, tool)
    if defs:
        parameters["$defs"] = defs
    return _openapi30_fixups(parameters), arguments


def _param_schema(param: Mapping[str, Any]) -> Any:
    """A parameter's schema (``schema``, else the first ``content`` entry's), with its description."""
    given = param.get("schema")
    if given is None and isinstance(param.get("content"), Mapping) and param["content"]:
        given = next(iter(param["content"].values())).get("schema")
    schema: dict[str, Any] = copy.deepcopy(dict(given)) if isinstance(given, Mapping) else {}
    if isinstance(param.get("description"), str) and "$ref" not in schema:
        schema.setdefault("description", param["description"])
    return schema


def _json_body_schema(body: Mapping[str, Any]) -> Any:
    content = body.get("content") or {}
    for media_type in content:
        if media_type == "application/json" or re.fullmatch(r"application/[\w.\-]+\+json", media_type):
            return content[media_type].get("schema")
    return None


def _deref(spec: Mapping[str, Any], node: Any, tool: str) -> Mapping[str, Any]:
    """Follow ``$ref`` chains to ``#/components/...`` (parameters, request bodies, schemas)."""
    seen = set()
    while isinstance(node, Mapping) and isinstance(node.get("$ref"), str):
        ref = node["$ref"]
        if ref in seen or not ref.startswith("#/"):
            raise ToolRegistrationError(f"cannot resolve the reference {ref!r}", tool=tool)
        seen.add(ref)
        node = spec
        for token in ref[2:].split("/"):
            token = token.replace("~1", "/").replace("~0", "~")
            if not isinstance(node, Mapping) or token not in node:
                raise ToolRegistrationError(f"the reference {ref!r} has no target", tool=tool)
            node = node[token]
    return node if isinstance(node, Mapping) else {}


def _copy_component_schemas(spec: Mapping[str, Any], parameters: dict[str, Any], tool: str) -> dict[str, Any]:
    """Copy every ``#/components/schemas/X`` reachable from ``parameters`` into ``$defs``, rewriting refs."""
    defs: dict[str, Any] = {}
    pending = _rewrite_refs(parameters)
    while pending:
        name = pending.pop()
        if name in defs:
            continue
        target = _deref(spec, {"$ref": _COMPONENT_SCHEMA + name}, tool)
        defs[name] = copy.deepcopy(dict(target))
        pending.extend(_rewrite_refs(defs[name]))
    return defs


def _rewrite_refs(node: Any) -> list[str]:
    """Point component-schema refs in ``node`` at ``#/$defs/`` (in place); return the names."""
    found = []
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith(_COMPONENT_SCHEMA):
            found.append(ref[len(_COMPONENT_SCHEMA):])
            node["$ref"] = "#/$defs/" + found[-1]
        for value in node.values():
            found.extend(_rewrite_refs(value))
    elif isinstance(node, list):
        for value in node:
            found.extend(_rewrite_refs(value))
    return found


def _openapi30_fixups(node: Any) -> Any:
    """OpenAPI 3.0 to JSON Schema: boolean ``exclusiveMinimum``/``exclusiveMaximum`` become numbers; booleans and
    numbers a YAML-to-JSON conversion wrote as strings (``"maximum": "50"``, RestBench's Spotify) are read back."""
    if isinstance(node, list):
        return [_openapi30_fixups(v) for v in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in ("properties", "$defs") and isinstance(value, dict):
            out[key] = {name: _openapi30_fixups(sub) for name, sub in value.items()}
        elif (key in _BOOLEAN_KEYWORDS or key == "additionalProperties") and value in ("true", "false"):
            out[key] = value == "true"
        elif key in _NUMBER_KEYWORDS and isinstance(value, str) and re.fullmatch(r"-?\d{1,1000}(\.\d+)?", value):
            out[key] = float(value) if "." in value else int(value)  # longer: left a string, refused as no number
        elif key in _VALUE_KEYWORDS:
            out[key] = value
        else:
            out[key] = _openapi30_fixups(value)
    for bound, exclusive in (("minimum", "exclusiveMinimum"), ("maximum", "exclusiveMaximum")):
        if isinstance(out.get(exclusive), bool):
            if out.pop(exclusive) and bound in out:
                out[exclusive] = out.pop(bound)
    return out


def _truthy(value: Any) -> bool:
    return value is True or value == "true"
