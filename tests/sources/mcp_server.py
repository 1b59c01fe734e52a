"""A real MCP server written with the official SDK (``mcp.server.mcpserver.MCPServer``), for the tests.

    python tests/sources/mcp_server.py            # over stdio
    python tests/sources/mcp_server.py --http     # streamable HTTP on 127.0.0.1, port on stdout

Its tools cover what a client must handle: text, structured results, a tool that fails
(``isError``), a schema tooldec refuses (``format: uri-template``) beside ones it accepts, a slow
tool, and one that reports a variable of its environment.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Annotated, Literal

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent
from pydantic import Field

server = MCPServer("tooldec-test", log_level="WARNING")

CAPITALS = {"France": "Paris", "Japan": "Tokyo", "Kenya": "Nairobi"}


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def capital(country: Literal["France", "Japan", "Kenya"]) -> str:
    """The capital city of a country."""
    return CAPITALS[country]


@server.tool()
def weather(city: str) -> dict[str, object]:
    """Today's weather in a city, as structured data."""
    return {"city": city, "temperature": 21, "sky": "clear"}


@server.tool()
def only_structured(n: int) -> CallToolResult:
    """A result with structured content and no text."""
    return CallToolResult(content=[], structured_content={"n": n, "square": n * n})


@server.tool()
def divide(a: float, b: float) -> float:
    """Divide a by b (fails for b = 0)."""
    if b == 0:
        raise ToolError("cannot divide by zero")
    return a / b


@server.tool()
def expand(template: Annotated[str, Field(json_schema_extra={"format": "uri-template"})]) -> str:
    """A tool whose schema asks for a URI template, a format tooldec cannot write exactly."""
    return template


@server.tool()
def sleepy(seconds: float) -> str:
    """Sleep, then say so."""
    time.sleep(seconds)
    return "awake"


@server.tool()
def shout(text: str) -> CallToolResult:
    """A result that is two text blocks."""
    return CallToolResult(content=[TextContent(text=text.upper()), TextContent(text="!")])


@server.tool()
def show_variable() -> str:
    """TOOLDEC_TEST_VARIABLE and TOOLDEC_TEST_OTHER in the server's environment ("unset" where not set)."""
    return " ".join(os.environ.get(name, "unset") for name in ("TOOLDEC_TEST_VARIABLE", "TOOLDEC_TEST_OTHER"))


def main(argv: list[str]) -> None:
    if "--http" not in argv:
        server.run()
        return
    import socket

    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    print(sock.getsockname()[1], flush=True)
    config = uvicorn.Config(server.streamable_http_app(), log_level="warning")
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    main(sys.argv[1:])
