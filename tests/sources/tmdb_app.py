"""A small TMDB-like HTTP API (FastAPI) for the OpenAPI source's tests, served on 127.0.0.1.

It answers a few of TMDB's operations from a table of three films, checks TMDB's ``api_key``
query parameter (or an ``X-Api-Key`` header), and records the raw path of every request, so a test can see exactly what
reached the server (``../admin`` must arrive as one encoded segment and never reach ``/admin``).
"""

from __future__ import annotations

import time
from typing import Annotated, Any

from fastapi import Body, FastAPI, Header, HTTPException, Query, Request
from fastapi.responses import PlainTextResponse, RedirectResponse

API_KEY = "secret-key"
MOVIES: dict[int, dict[str, Any]] = {
    550: {"id": 550, "title": "Fight Club", "year": 1999, "cast": ["Edward Norton", "Brad Pitt"]},
    603: {"id": 603, "title": "The Matrix", "year": 1999, "cast": ["Keanu Reeves", "Carrie-Anne Moss"]},
    13: {"id": 13, "title": "Forrest Gump", "year": 1994, "cast": ["Tom Hanks", "Robin Wright"]},
}


def make_app() -> FastAPI:
    """A fresh app; ``app.state.seen`` lists ``(method, raw path, query)`` of every request."""
    app = FastAPI()
    app.state.seen = []
    app.state.admin_hits = 0

    @app.middleware("http")
    async def record(request: Request, call_next: Any) -> Any:
        app.state.seen.append((request.method, request.scope["raw_path"].decode(), request.url.query))
        if API_KEY not in (request.query_params.get("api_key"), request.headers.get("x-api-key")):
            return PlainTextResponse("invalid api_key", status_code=401)
        return await call_next(request)

    @app.get("/search/movie")
    def search_movie(query: str, page: int = 1) -> dict[str, Any]:
        found = [m for m in MOVIES.values() if query.lower() in m["title"].lower()]
        return {"page": page, "results": [{"id": m["id"], "title": m["title"]} for m in found]}

    @app.get("/movie/{movie_id}")
    def movie(movie_id: str) -> dict[str, Any]:
        if not movie_id.isdigit() or int(movie_id) not in MOVIES:
            raise HTTPException(404, f"no movie {movie_id!r}")
        return {k: v for k, v in MOVIES[int(movie_id)].items() if k != "cast"}

    @app.get("/movie/{movie_id}/credits")
    def credits(movie_id: int, x_request_id: Annotated[str | None, Header()] = None) -> dict[str, Any]:
        if movie_id not in MOVIES:
            raise HTTPException(404, "no such movie")
        return {"id": movie_id, "cast": MOVIES[movie_id]["cast"], "request_id": x_request_id}

    @app.post("/list")
    def create_list(name: Annotated[str, Body()], movie_ids: Annotated[list[int], Body()],
                    language: Annotated[str, Query()] = "en") -> dict[str, Any]:
        return {"name": name, "movies": [MOVIES[i]["title"] for i in movie_ids if i in MOVIES], "language": language}

    @app.get("/admin")
    def admin() -> dict[str, str]:
        app.state.admin_hits += 1
        return {"secret": "the admin page"}

    @app.get("/go/elsewhere")
    def elsewhere() -> RedirectResponse:
        return RedirectResponse("http://example.invalid/steal", status_code=302)

    @app.get("/go/home")
    def home() -> RedirectResponse:
        return RedirectResponse("/movie/603?api_key=" + API_KEY, status_code=307)

    @app.get("/slow")
    def slow(seconds: float) -> dict[str, float]:
        time.sleep(seconds)
        return {"slept": seconds}

    @app.get("/big")
    def big(kilobytes: int) -> PlainTextResponse:
        return PlainTextResponse("x" * (kilobytes * 1024))

    return app
