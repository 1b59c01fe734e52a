"""Tool definitions written as dicts by the common APIs, read into one shape, recognised from its keys (never from
a vendor switch the caller has to pass)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tooldec.errors import ToolRegistrationError

__all__ = ["ACCEPTED_SHAPES", "dict_schema"]

#: What :func:`dict_schema` accepts, as shown in its error message.
ACCEPTED_SHAPES = (
    'OpenAI Chat Completions {"type": "function", "function": {"name", "description", "parameters"}}',
    'OpenAI Responses {"type": "function", "name", "description", "parameters"}',
    'MCP {"name", "description", "inputSchema"}',
    'Anthropic {"name", "description", "input_schema"}',
    'plain (BFCL, ToolEval) {"name", "description", "parameters"}',
)


def dict_schema(spec: Mapping[str, Any]) -> tuple[str, str, Mapping[str, Any]]:
    """``(name, description, parameters)`` of a tool dict in any accepted shape; a missing, empty or null schema
    means no arguments. :class:`ToolRegistrationError`, listing the shapes, for any other dict."""
    inner = spec.get("function")
    if inner is not None and isinstance(inner, Mapping) and spec.get("type", "function") == "function":
        spec = inner  # Chat Completions (also the legacy form without "type")
    name = spec.get("name")
    present = ("parameters" in spec) + ("inputSchema" in spec) + ("input_schema" in spec)  # the keys a schema may be under
    if not isinstance(name, str) or present > 1 or spec.get("type", "function") != "function":
        shapes = "\n  ".join(ACCEPTED_SHAPES)
        found = f"keys {sorted(spec)}" + (f" with type {spec['type']!r}" if "type" in spec else "")
        raise ToolRegistrationError(
            f"not a tool definition ({found}); accepted shapes:\n  {shapes}",
            tool=name if isinstance(name, str) else None)
    description = spec.get("description") or ""
    if not isinstance(description, str):
        raise ToolRegistrationError(f"description must be a string, got {type(description).__name__}", tool=name)
    parameters = (spec["parameters"] if "parameters" in spec else spec["inputSchema"] if "inputSchema" in spec
                  else spec.get("input_schema"))
    if parameters is None or (not parameters and isinstance(parameters, Mapping)):
        parameters = {"type": "object", "properties": {}}
    return name, description, parameters
