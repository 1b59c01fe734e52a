"""``load_tools_file`` beyond what tests/test_cli.py checks, and the import cost of ``tooldec.sources``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tooldec.errors import ToolSourceError
from tooldec.sources import load_tools_file

from .conftest import Served
from .tmdb_app import API_KEY

SPEC = Path(__file__).resolve().parent / "tmdb_like.yaml"


def test_importing_sources_loads_no_client_and_no_framework() -> None:
    code = ("import sys, tooldec.sources\n"
            "print(sorted(m for m in ('mcp', 'httpx', 'yaml', 'torch', 'transformers') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_an_openapi_file_gives_tools_that_make_requests(tmdb_server: Served) -> None:
    with load_tools_file(SPEC, base_url=tmdb_server.url, credentials={"api_key": API_KEY}) as loaded:
        assert loaded.kind == "openapi" and loaded.source is not None
        search = next(tool for tool in loaded.tools if tool.name == "search_movie")
        assert search(query="fight") == {"page": 1, "results": [{"id": 550, "title": "Fight Club"}]}


@pytest.mark.parametrize(("name", "text", "message"), [
    ("swagger.json", '{"swagger": "2.0", "paths": {}}', "a Swagger 2.0 document; convert it to OpenAPI 3 first"),
    ("empty.json", "[]", "expected tool definitions"),
    ("bad.json", '[{"name": "has space", "parameters": {}}]', "tool 0: tool 'has space': 'has space' is not a valid tool name"),
    ("bad.yaml", "- name: f\n  parameters: {type: object, properties: {x: {type: array, contains: {type: integer}}}}\n",
     "tool 0: tool 'f': at /properties/x/contains: keyword 'contains'"),
    ("empty.py", "TOOLS = []\n", ":1: TOOLS is empty"),
    ("item.py", "TOOLS = [\n    5,\n]\n", ":1: cannot make a tool from int"),
])
def test_errors_name_the_file(tmp_path: Path, name: str, text: str, message: str) -> None:
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(ToolSourceError) as info:
        load_tools_file(path)
    assert str(info.value).startswith(str(path)) and message in str(info.value), str(info.value)
