"""OpenAPI operations as tools: RestBench's TMDB and Spotify documents, and small made-up specs."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from tooldec.errors import ToolRegistrationError, UnsupportedSchemaError
from tooldec.tools import ToolSet, tools_from_openapi
from tooldec.tools.openapi import openapi_operations


def load(data_dir: Path, name: str) -> dict[str, Any]:
    spec: dict[str, Any] = json.loads((data_dir / "restbench" / name).read_text())
    return spec


@pytest.mark.parametrize(("file", "count"), [("tmdb_oas.json", 54), ("spotify_oas.json", 40)])
@pytest.mark.parametrize("naming", ["operation_id", "method_path"])
def test_restbench_documents(data_dir: Path, file: str, count: int, naming: Any) -> None:
    spec = load(data_dir, file)
    before = copy.deepcopy(spec)
    operations = openapi_operations(spec, naming=naming)
    assert spec == before, "the document must not be modified"
    assert len(operations) == count
    tools = ToolSet(op.tool for op in operations)  # unique, valid names
    assert len(tools) == count
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
    assert ops["remove-albums-user"].locations == {"ids": "query"}, "a body field named like a query parameter is dropped"
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
    spec = spec_with(operationId="bad_format", parameters=[{"name": "d", "in": "query", "schema": {"type": "string", "format": "uri-template"}}])
    with pytest.raises(UnsupportedSchemaError) as info:
        tools_from_openapi(spec)
    assert (info.value.tool, info.value.pointer, info.value.keyword) == ("bad_format", "/properties/d/format", "format")
    with pytest.raises(ValueError, match="naming must be"):
        tools_from_openapi(spec, naming="path")  # type: ignore[arg-type]
