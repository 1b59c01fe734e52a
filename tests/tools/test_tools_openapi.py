"""OpenAPI operations as tools: RestBench's TMDB and Spotify documents, and small made-up specs."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from tooldec.errors import ToolRegistrationError, UnsupportedSchemaError
from tooldec.tools import ToolSet, tools_from_openapi
from tooldec.tools.openapi import Argument, openapi_operations


def load(data_dir: Path, name: str) -> dict[str, Any]:
    spec: dict[str, Any] = json.loads((data_dir / "restbench" / name).read_text())
    return spec


@pytest.mark.parametrize(("file", "count", "fixture_count"), [("tmdb_oas.json", 54, 7), ("spotify_oas.json", 40, 11)])
@pytest.mark.parametrize("naming", ["operation_id", "method_path"])
def test_restbench_documents(data_dir: Path, full_data: bool, file: str, count: int, fixture_count: int,
                             naming: Any) -> None:
    spec = load(data_dir, file)
    before = copy.deepcopy(spec)
    operations = openapi_operations(spec, naming=naming)
    assert spec == before, "the document must not be modified"
    assert len(operations) == (count if full_data else fixture_count)
    tools = ToolSet(op.tool for op in operations)  # unique, valid names
    assert len(tools) == len(operations)
    for op in operations:
        params = op.tool.parameters
        assert set(op.locations) == set(params["properties"])
        for name in op.path.split("{")[1:]:
            name = name.split("}")[0]
            assert op.locations[name] == "path" and name in params["required"]
    assert [t.name for t in tools_from_openapi(spec, naming=naming)] == tools.names


def test_tmdb_credits(data_dir: Path) -> None:
    spec = load(data_dir, "tmdb_oas.json")
    by_path = {(op.method, op.path): op for op in openapi_operations(spec, naming="method_path")}
    credits = by_path[("GET", "/movie/{movie_id}/credits")]
    assert credits.tool.name == "get_movie_movie_id_credits"
    assert credits.tool.parameters == {"type": "object", "properties": {"movie_id": {"type": "integer"}}, "required": ["movie_id"]}
    assert credits.tool.description.startswith("Get Credits\n\nGet the cast and crew for a movie.")
    search = by_path[("GET", "/search/movie")]
    assert search.tool.parameters["required"] == ["query"]
    assert search.locations["page"] == "query"
    assert search.tool.validate_arguments({"query": "x", "page": "two"}) == ["at /page: 'two' is not of type 'integer'"]
    ids = {op.tool.name for op in openapi_operations(spec)}
    assert "GET_movie-movie_id-credits" in ids


def test_spotify_string_booleans_and_numbers(data_dir: Path) -> None:
    """The Spotify file says ``"required": "true"``, ``"maximum": "50"``: read as JSON values."""
    spec = load(data_dir, "spotify_oas.json")
    ops = {op.tool.name: op for op in openapi_operations(spec)}
    tracks = ops["get-an-albums-tracks"]
    assert tracks.tool.parameters["required"] == ["id"]
    assert tracks.tool.parameters["properties"]["limit"] == {"type": "integer", "minimum": 0, "maximum": 50}
    queue = ops["add-to-queue"]
    assert queue.tool.parameters["required"] == ["uri"], "'required': 'true' is read as true, 'false' as false"
    remove = ops["remove-albums-user"]
    assert remove.locations == {"ids": "query", "ids_body": "body"}, "a body field named like a query parameter is kept"
    assert remove.arguments["ids_body"] == Argument("body", "ids")
    assert remove.tool.source_parameters is not None
    assert remove.tool.source_parameters["properties"]["ids_body"]["description"].startswith("(request body property 'ids') ")
    play = ops["start-a-users-playback"]
    assert {play.locations[k] for k in ("context_uri", "uris", "position_ms")} == {"body"}
    assert play.tool.parameters["properties"]["offset"] == {"additionalProperties": True, "type": "object"}


OWNER = {"type": "object", "properties": {"email": {"type": ["string", "null"], "format": "email"}}}


def spec_with(**operation: Any) -> dict[str, Any]:
    return {"openapi": "3.0.0", "paths": {"/pets/{pet_id}": {"post": operation}}, "components": {
        "schemas": {
            "Pet": {"type": "object", "properties": {"name": {"type": "string"}, "owner": {"$ref": "#/components/schemas/Owner"}},
                    "required": ["name"]},
            "Owner": {"type": "object", "properties": {"email": {"type": "string", "format": "email", "nullable": True}}},
        },
        "parameters": {"PetId": {"name": "pet_id", "in": "path", "schema": {"type": "integer", "minimum": 0, "exclusiveMinimum": True}}},
        "requestBodies": {"PetBody": {"required": True, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Pet"}}}}},
    }}


def test_refs_are_resolved() -> None:
    spec = spec_with(operationId="update pet!", parameters=[
        {"$ref": "#/components/parameters/PetId"}, {"name": "X-Trace", "in": "header", "schema": {"type": "string"}},
        {"name": "sid", "in": "cookie", "schema": {"type": "string"}}],
        requestBody={"$ref": "#/components/requestBodies/PetBody"})
    (op,) = openapi_operations(spec)
    assert op.tool.name == "update_pet_"
    assert op.locations == {"pet_id": "path", "X-Trace": "header", "name": "body", "owner": "body"}
    assert op.tool.parameters == {
        "type": "object",
        "properties": {"pet_id": {"type": "integer", "minimum": 1}, "X-Trace": {"type": "string"},
                       "name": {"type": "string"}, "owner": OWNER},
        "required": ["pet_id", "name"],
    }


def test_non_object_body_and_name_collisions() -> None:
    spec = spec_with(requestBody={"content": {"application/json": {"schema": {"type": "array", "items": {"$ref": "#/components/schemas/Pet"}}}}},
                     parameters=[{"name": "pet_id", "in": "path", "schema": {"type": "string"}}])
    spec["paths"]["/pets"] = {"post": {"operationId": "post_pets_pet_id"}}
    first, second = openapi_operations(spec, naming="method_path")
    assert (first.tool.name, second.tool.name) == ("post_pets_pet_id", "post_pets")
    assert first.locations == {"pet_id": "path", "body": "body"}
    pet = {"type": "object", "properties": {"name": {"type": "string"}, "owner": OWNER}, "required": ["name"]}
    assert first.tool.parameters["properties"]["body"] == {"type": "array", "items": pet}
    assert first.tool.parameters["required"] == ["pet_id"]
    by_id = openapi_operations(spec)
    assert [op.tool.name for op in by_id] == ["post_pets_pet_id", "post_pets_pet_id_2"]


def test_errors_name_the_operation() -> None:
    with pytest.raises(ToolRegistrationError, match="tool 'bad_ref': the reference '#/components/parameters/Nope' has no target"):
        openapi_operations(spec_with(operationId="bad_ref", parameters=[{"$ref": "#/components/parameters/Nope"}]))
    spec = spec_with(operationId="bad_format", parameters=[{"$ref": "#/components/parameters/PetId"},
                                                           {"name": "d", "in": "query", "schema": {"type": "string", "format": "uri-template"}}])
    with pytest.raises(UnsupportedSchemaError) as info:
        tools_from_openapi(spec)
    assert (info.value.tool, info.value.pointer, info.value.keyword) == ("bad_format", "/properties/d/format", "format")
    with pytest.raises(ValueError, match="naming must be"):
        tools_from_openapi(spec, naming="path")  # type: ignore[arg-type]


@pytest.mark.parametrize(("spec", "message"), [
    ({"openapi": "3.0.0", "paths": ["/pets"]}, "the document's 'paths' must be an object of path -> path item, got list"),
    ({"openapi": "3.0.0", "paths": {"/pets": "GET"}}, "path '/pets': a path item must be an object, got str"),
    ({"openapi": "3.0.0", "paths": {"/pets": {"get": None}}}, "GET /pets: an operation must be an object, got NoneType"),
    ({"openapi": "3.0.0", "paths": {"/pets": {"get": {"operationId": "list", "parameters": [
        {"in": "query", "schema": {"type": "integer"}}]}}}}, "tool 'list': parameter 0 of the operation has no name"),
    ({"openapi": "3.0.0", "paths": {"/pets": {"parameters": [{"name": "", "in": "query"}], "get": {"operationId": "list"}}}},
     "tool 'list': parameter 0 of the path item has no name"),
    ({"openapi": "3.0.0", "paths": {"/pets": {"get": {"operationId": "list", "parameters": [{"name": "q"}]}}}},
     "tool 'list': parameter 'q': 'in' must be path, query, header or cookie, got None"),
    ({"openapi": "3.0.0", "paths": {"/pets": {"get": {"operationId": "list", "parameters": {"name": "q"}}}}},
     "tool 'list': the operation's 'parameters' must be a list, got dict"),
    ({"openapi": "3.0.0", "paths": {"/pets/{id}": {"get": {"operationId": "get"}}}},
     "tool 'get': the path '/pets/{id}' has {id}, which no path parameter declares"),
    (["openapi"], "an OpenAPI document is a JSON object, got list"),
])
def test_malformed_documents_give_typed_errors(spec: Any, message: str) -> None:
    with pytest.raises(ToolRegistrationError) as info:
        openapi_operations(spec)
    assert str(info.value) == message


def test_the_same_name_in_two_places_is_kept_twice() -> None:
    """A query parameter and a required body property both called ``id``; a path and a header
    parameter both called ``version``: each keeps its place, the later one a suffixed name."""
    spec = {"openapi": "3.0.0", "paths": {"/things/{version}": {"put": {
        "operationId": "put_thing",
        "parameters": [{"name": "version", "in": "path", "schema": {"type": "integer"}},
                       {"name": "id", "in": "query", "schema": {"type": "string"}},
                       {"name": "version", "in": "header", "schema": {"type": "string"}}],
        "requestBody": {"required": True, "content": {"application/json": {"schema": {
            "type": "object", "required": ["id"],
            "properties": {"id": {"type": "integer", "description": "The body's id."}, "body": {"type": "string"}}}}}},
    }}}}
    (op,) = openapi_operations(spec)
    assert op.arguments == {
        "version": Argument("path", "version"), "id": Argument("query", "id"),
        "version_header": Argument("header", "version"), "id_body": Argument("body", "id"), "body": Argument("body", "body"),
    }
    assert op.tool.parameters["required"] == ["version", "id_body"], "the body's required property is not lost"
    assert op.tool.parameters["properties"]["id_body"] == {"type": "integer"}
    assert op.tool.source_parameters is not None
    assert op.tool.source_parameters["properties"]["id_body"]["description"] == "(request body property 'id') The body's id."
    assert op.tool.validate_arguments({"version": 2, "id_body": 7}) == []


def test_servers_security_and_explode_are_kept() -> None:
    spec = {"openapi": "3.0.0", "servers": [{"url": "https://{env}.example.com", "variables": {"env": {"default": "api"}}}],
            "security": [{"key": []}],
            "paths": {"/a": {"get": {"operationId": "a", "parameters": [
                {"name": "ids", "in": "query", "explode": False, "schema": {"type": "array", "items": {"type": "integer"}}}]}},
                      "/b": {"servers": [{"url": "https://b.example.com"}], "get": {"operationId": "b", "security": []}}}}
    a, b = openapi_operations(spec)
    assert (a.servers, a.security, a.arguments["ids"].explode) == (("https://api.example.com",), ("key",), False)
    assert (b.servers, b.security) == (("https://b.example.com",), ())
