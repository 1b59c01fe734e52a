"""``OpenAPISource``: every operation of a TMDB-like document makes its real HTTP request to a
local FastAPI server, hostile argument values included; failures come back as the call's error."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tooldec.dialects import ToolCall
from tooldec.errors import ToolCallError, ToolSourceError
from tooldec.runtime import Executor
from tooldec.sources import OpenAPISource
from tooldec.sources.files import read_document

from .conftest import Served
from .tmdb_app import API_KEY

SPEC = Path(__file__).resolve().parent / "tmdb_like.yaml"


def source(server: Served, **options: Any) -> OpenAPISource:
    options.setdefault("credentials", {"api_key": API_KEY})
    return OpenAPISource(SPEC, base_url=server.url, **options)


def run(api: OpenAPISource, tool_name: str, /, **arguments: Any) -> str:
    """What the model reads after the call (through the runtime's executor, as in a turn)."""
    tool = next(t for t in api.tools if t.name == tool_name)
    return Executor(timeout=20).run(tool, ToolCall(tool_name, arguments)).observation


def test_each_argument_goes_where_the_document_says(tmdb_server: Served) -> None:
    with source(tmdb_server) as api:
        assert run(api, "search_movie", query="matrix", page=2) == '{"page": 2, "results": [{"id": 603, "title": "The Matrix"}]}'
        assert run(api, "movie_credits", movie_id=550, **{"X-Request-Id": "r-1"}) == (
            '{"id": 550, "cast": ["Edward Norton", "Brad Pitt"], "request_id": "r-1"}')
        assert run(api, "create_list", name="90s", movie_ids=[550, 603], language="fr") == (
            '{"name": "90s", "movies": ["Fight Club", "The Matrix"], "language": "fr"}')
    assert ("GET", "/search/movie", f"query=matrix&page=2&api_key={API_KEY}") in tmdb_server.app.state.seen


def test_names_written_elsewhere_rename_the_tools_and_the_calls_still_go_out(tmdb_server: Served) -> None:
    with source(tmdb_server, names={"GET /movie/{movie_id}/credits": "get_movie_cast_and_crew"}) as api:
        names = [t.name for t in api.tools]
        assert "get_movie_cast_and_crew" in names and "movie_credits" not in names and "search_movie" in names
        assert run(api, "get_movie_cast_and_crew", movie_id=550, **{"X-Request-Id": "r-2"}) == (
            '{"id": 550, "cast": ["Edward Norton", "Brad Pitt"], "request_id": "r-2"}')


@pytest.mark.parametrize(("value", "raw"), [
    ("../admin", "/movie/..%2Fadmin"),
    ("a/b?c#d", "/movie/a%2Fb%3Fc%23d"),
    ("..", "/movie/%2E%2E"),
    (".", "/movie/%2E"),
    ("%2e%2e%2fadmin", "/movie/%252e%252e%252fadmin"),
    ("550 or 1=1", "/movie/550%20or%201%3D1"),
])
def test_no_path_value_changes_the_path(tmdb_server: Served, value: str, raw: str) -> None:
    with source(tmdb_server) as api:
        observation = run(api, "movie_details", movie_id=value)
    assert tmdb_server.app.state.seen[-1][:2] == ("GET", raw)
    assert tmdb_server.app.state.admin_hits == 0
    assert observation.startswith("error: GET ") and "HTTP 404" in observation, observation


def test_hostile_query_and_header_values(tmdb_server: Served) -> None:
    with source(tmdb_server) as api:
        assert "results" in run(api, "search_movie", query="x&api_key=stolen#frag")
        assert tmdb_server.app.state.seen[-1][2] == f"query=x%26api_key%3Dstolen%23frag&api_key={API_KEY}"
        seen = len(tmdb_server.app.state.seen)
        assert run(api, "movie_credits", movie_id=550, **{"X-Request-Id": "r\r\nX-Evil: 1"}) == (
            "error: header 'X-Request-Id': a line break or NUL cannot be sent in a header")
        assert len(tmdb_server.app.state.seen) == seen, "nothing was sent"


def test_errors_are_observations(tmdb_server: Served) -> None:
    with source(tmdb_server) as api:
        assert run(api, "movie_details", movie_id="42") == (
            f"error: GET {tmdb_server.url}/movie/42: HTTP 404 Not Found: {{\"detail\":\"no movie '42'\"}}")
    with source(tmdb_server, credentials={}, environ={}) as api:
        assert run(api, "search_movie", query="x") == f"error: GET {tmdb_server.url}/search/movie: HTTP 401 Unauthorized: invalid api_key"


def test_credentials_from_the_environment_and_public_operations(tmdb_server: Served) -> None:
    with source(tmdb_server, credentials={}, environ={"TOOLDEC_AUTH_API_KEY": API_KEY}) as api:
        assert "Fight Club" in run(api, "search_movie", query="fight")
        assert "HTTP 401" in run(api, "public")  # security: [] -> the key is not sent
    assert "api_key" not in tmdb_server.app.state.seen[-1][2]
    with pytest.raises(ToolSourceError, match="no security scheme named 'oauth'"):
        source(tmdb_server, credentials={"oauth": "token"})


def test_redirects_stay_on_the_host(tmdb_server: Served) -> None:
    with source(tmdb_server) as api:
        assert run(api, "go_home") == '{"id": 603, "title": "The Matrix", "year": 1999}'
        assert run(api, "go_elsewhere") == (
            f"error: GET {tmdb_server.url}/go/elsewhere: HTTP 302 redirects to http://example.invalid/steal, "
            "another host: not followed")


def test_timeouts_network_errors_and_large_responses(tmdb_server: Served) -> None:
    with source(tmdb_server, timeout=0.5, max_response_bytes=10_000) as api:
        assert run(api, "slow", seconds=3) == f"error: GET {tmdb_server.url}/slow: no answer within 0.5 s"
        big = run(api, "big", kilobytes=50)
        assert big == "x" * 10_000 + "\n[the response was cut at 10000 bytes]"
    with OpenAPISource(SPEC, base_url="http://127.0.0.1:9", credentials={"api_key": API_KEY}) as api:  # nothing listens
        observation = run(api, "search_movie", query="x")
    assert observation.startswith("error: GET http://127.0.0.1:9/search/movie: ConnectError: "), observation


def test_the_base_url_comes_from_servers_unless_overridden() -> None:
    document = read_document(SPEC)
    with OpenAPISource(document) as api:
        request = api._request(api.operations[0], {"query": "x"})  # built, not sent
        assert str(request.url) == "https://api.themoviedb.example/3/search/movie?query=x"
    del document["servers"]
    with pytest.raises(ToolSourceError, match="no absolute base URL .the document has no servers.; pass base_url="):
        OpenAPISource(document)


def test_a_fastapi_apps_own_document(tmdb_server: Served) -> None:
    """FastAPI writes its own OpenAPI 3.1 document: the tools made from it call the app."""
    document = tmdb_server.app.openapi()
    with OpenAPISource(document, base_url=tmdb_server.url, headers={"X-Api-Key": API_KEY}) as api:
        names = [tool.name for tool in api.tools]
        search = next(name for name in names if name.startswith("search_movie"))
        observation = run(api, search, query="gump")
    assert observation == '{"page": 1, "results": [{"id": 13, "title": "Forrest Gump"}]}'


def test_errors_raise_tool_call_error_outside_the_runtime(tmdb_server: Served) -> None:
    with source(tmdb_server) as api, pytest.raises(ToolCallError, match="HTTP 404"):
        api.call("movie_details", {"movie_id": "0"})
