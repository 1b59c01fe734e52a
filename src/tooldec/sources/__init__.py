"""Where tools come from when they are not Python functions: MCP servers, HTTP APIs described by
OpenAPI, and tool files (docs/tools.md). Needs the ``sources`` extra; each module imports its
client only when a source is made.
"""

from .files import load_tools_file, read_document
from .http import OpenAPISource
from .mcp import MCPSource, RefusedTool

__all__ = ["MCPSource", "OpenAPISource", "RefusedTool", "load_tools_file", "read_document"]
