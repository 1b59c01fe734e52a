"""Tools in, one normal form out: ``Tool`` (name, description, normalized schema, function) and ``ToolSet`` (the
inventory), from functions, vendor dicts, Pydantic models and OpenAPI documents."""

from tooldec.tools.openapi import tools_from_openapi
from tooldec.tools.schema import MAX_REF_DEPTH, normalize_schema
from tooldec.tools.tool import Tool
from tooldec.tools.toolset import Inventory, ToolLike, ToolSet

__all__ = ["MAX_REF_DEPTH", "Inventory", "Tool", "ToolLike", "ToolSet", "normalize_schema", "tools_from_openapi"]
