"""Where tools come from when they are not Python functions: MCP servers, HTTP APIs described by
OpenAPI, and tool files (a Python module, a JSON file of tool definitions, an OpenAPI document).

Each source gives ``Tool`` objects whose function does the real work (an MCP ``tools/call``, an
HTTP request), so the runtime runs them like any other tool. ``tooldec.sources`` needs the
``sources`` extra (``mcp``, ``httpx``, ``pyyaml``); each module imports its client only when a
source is made.
"""

from .files import load_tools_file, read_document
from .http import OpenAPISource
from .mcp import MCPSource, RefusedTool

__all__ = ["MCPSource", "OpenAPISource", "RefusedTool", "load_tools_file", "read_document"]
