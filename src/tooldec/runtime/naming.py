"""Tool names written from documentation by a local model (the ToolDec paper's appendix A.6).

ToolDec picks a tool by its name alone, and a REST operation named from its route
(``get_movie_movie_id_credits``) reads poorly: :func:`rewrite_names` asks a model for a short
name from each operation's documentation, for the OpenAPI loader:
``tools_from_openapi(spec, names=rewrite_names(openapi_operations(spec), generator, cache=path))``.

Examples:
    >>> clean_name("`get_movie_cast_and_crew()` returns the cast")
    'get_movie_cast_and_crew'
    >>> clean_name("Search Movies By Title")
    'search_movies_by_title'
    >>> clean_name("  ")
    ''
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..backends.generation import Generator
from ..tools.openapi import Operation

__all__ = ["NAMING_EXAMPLES", "NAMING_INSTRUCTION", "clean_name", "documentation", "name_distance", "naming_messages",
           "rewrite_names"]

NAMING_INSTRUCTION = ("Write a short, meaningful function name for a REST API operation, from its documentation. "
                      "Use lower-case English words joined by underscores; say what the operation does or returns; "
                      "do not copy the URL path. Answer with the name only.")
"""The system message of the naming prompt."""

NAMING_EXAMPLES: tuple[tuple[str, str, str], ...] = (
    ("GET /movie/{movie_id}/credits", "Get the cast and crew for a movie.", "get_movie_cast_and_crew"),
    ("GET /artists/{id}/albums", "Get Spotify catalog information about an artist's albums.", "get_artist_albums"),
    ("POST /users/{user_id}/playlists", "Create a playlist for a Spotify user.", "create_user_playlist"),
)
"""Worked examples given as earlier turns: the paper's (RestBench's ``GET /movie/{movie_id}/credits``)
and two from another API, so that a small model does not copy one answer for every operation."""


def naming_messages(route: str, doc: str) -> list[dict[str, str]]:
    """The chat messages that ask for one operation's name."""
    messages = [{"role": "system", "content": NAMING_INSTRUCTION}]
    for example_route, example_doc, name in NAMING_EXAMPLES:
        messages.append({"role": "user", "content": f"Operation: {example_route}\nDocumentation: {example_doc}"})
        messages.append({"role": "assistant", "content": name})
    messages.append({"role": "user", "content": f"Operation: {route}\nDocumentation: {doc}"})
    return messages


def documentation(operation: Operation, limit: int = 300) -> str:
    """The operation's summary and description on one line, cut at ``limit`` characters."""
    text = " ".join(operation.tool.description.split())
    return text[:limit] or "(no documentation)"


def clean_name(text: str) -> str:
    """The first identifier-like phrase of a model's answer, as snake_case (``""`` if none)."""
    line = text.strip().splitlines()[0] if text.strip() else ""
    line = re.sub(r"\(.*", "", line.strip().strip("`'\"* "))
    words = re.findall(r"[A-Za-z0-9]+", line)
    return "_".join(w.lower() for w in words[:8])[:64]


def name_distance(a: str, b: str) -> float:
    """1 - difflib's similarity ratio of two names (0: the same, 1: nothing in common).

    Examples:
        >>> name_distance("get_movie_credits", "get_movie_credits"), round(name_distance("abc", "xyz"), 2)
        (0.0, 1.0)
    """
    import difflib

    return 1.0 - difflib.SequenceMatcher(None, a, b).ratio()


def rewrite_names(operations: Sequence[Operation], generator: Generator, *, temperature: float = 0.0, seed: int = 0,
                  cache: Path | None = None, model: str = "", max_new_tokens: int = 24) -> dict[str, str]:
    """A name per operation, by ``"METHOD /path"``, written by ``generator``'s model (an empty
    answer keeps the route's own name). Above 0, each ``seed`` of ``temperature`` gives another set
    (the paper's A.8). ``cache``: a JSON file, read when it holds every operation, else written
    (with ``model``) so that a run is reproducible."""
    routes = [f"{op.method} {op.path}" for op in operations]
    if cache is not None and cache.exists():
        stored = json.loads(cache.read_text())
        if all(route in stored.get("names", {}) for route in routes):
            return {route: stored["names"][route] for route in routes}
    tokenizer = generator.tokenizer
    generator.seed(seed)
    names: dict[str, str] = {}
    for route, operation in zip(routes, operations):
        text = tokenizer.apply_chat_template(naming_messages(route, documentation(operation)),
                                             add_generation_prompt=True, tokenize=False)
        ids = list(tokenizer.encode(text, add_special_tokens=False))
        out = generator.generate(ids, max_new_tokens=max_new_tokens, temperature=temperature)
        answer = tokenizer.decode([t for t in out.ids if t not in generator.eos_ids], skip_special_tokens=True)
        names[route] = clean_name(answer) or operation.tool.name
    if cache is not None:
        cache.parent.mkdir(parents=True, exist_ok=True)
        record: Mapping[str, Any] = {"model": model, "temperature": temperature, "seed": seed,
                                     "instruction": NAMING_INSTRUCTION, "examples": NAMING_EXAMPLES, "names": names}
        cache.write_text(json.dumps(record, indent=2, ensure_ascii=False) + "\n")
    return names
