"""Typed errors of tooldec: what a user can get wrong is reported when a tool is registered, a list
compiled or a tokenizer loaded, never in the middle of generation (docs/DESIGN.md, "Error contract").
"""

from __future__ import annotations

__all__ = [
    "BudgetError",
    "ContextLengthError",
    "DuplicateToolError",
    "InvalidSchemaError",
    "InvalidToolNameError",
    "SchemaTooComplexError",
    "TokenizerError",
    "ToolCallError",
    "ToolDecError",
    "ToolNotCallableError",
    "ToolNotFoundError",
    "ToolRegistrationError",
    "ToolSourceError",
    "UnknownDialectError",
    "UnsupportedSchemaError",
]


class ToolDecError(Exception):
    """Base class of every error tooldec raises on purpose."""


class ToolRegistrationError(ToolDecError, ValueError):
    """A tool cannot be added; ``tool`` names it (``None`` when the name itself is missing)."""

    def __init__(self, message: str, *, tool: str | None = None) -> None:
        self.tool = tool
        super().__init__(f"tool {tool!r}: {message}" if tool is not None else message)


class DuplicateToolError(ToolRegistrationError):
    """Two tools with the same name: the model could not tell them apart."""


class InvalidToolNameError(ToolRegistrationError):
    """A name that is empty or has characters a call format cannot carry unescaped."""


class InvalidSchemaError(ToolRegistrationError):
    """The parameters are not a valid JSON Schema, or no value can satisfy them."""

    def __init__(self, message: str, *, tool: str | None = None, pointer: str = "") -> None:
        self.pointer = pointer
        super().__init__(f"at {pointer or '/'}: {message}", tool=tool)


class UnsupportedSchemaError(ToolRegistrationError):
    """A schema keyword that constrains values but that tooldec cannot enforce (ignoring it would
    let the model write invalid arguments)."""

    def __init__(self, message: str, *, tool: str | None = None, pointer: str = "", keyword: str = "") -> None:
        self.pointer = pointer
        self.keyword = keyword
        super().__init__(f"at {pointer or '/'}: keyword {keyword!r}: {message}", tool=tool)


class SchemaTooComplexError(UnsupportedSchemaError):
    """A schema tooldec could enforce in principle, but whose automaton would exceed its size
    bounds (nesting depth, recursion, branches, states); ``keyword`` names what made it grow."""


class ToolNotFoundError(ToolDecError, KeyError):
    """A tool name that is not in the tool set."""

    def __str__(self) -> str:  # KeyError would print the repr of the message
        return str(self.args[0]) if self.args else ""


class ToolNotCallableError(ToolDecError, TypeError):
    """A tool made from a schema alone (a dict, an OpenAPI operation) has no function to run."""


class UnknownDialectError(ToolDecError, LookupError):
    """A call-format name that no registered dialect has; the message lists the known names."""


class TokenizerError(ToolDecError):
    """A tokenizer whose vocabulary cannot be turned into exact token bytes."""


class BudgetError(ToolDecError, ValueError):
    """A call must be made but cannot close within the token budget: refused before decoding."""


class ContextLengthError(ToolDecError, ValueError):
    """The prompt does not fit the model's context window; the message says how to raise it."""


class ToolSourceError(ToolDecError):
    """A source of tools (an MCP server, an OpenAPI document, a tools file) cannot be read or
    reached: the server does not start, the document has no base URL, the file does not parse."""


class ToolCallError(ToolDecError):
    """Raised by a tool's function to report that the call failed (an MCP result with
    ``isError``, an HTTP error status, a network error): the runtime gives the model the message
    as the observation, as ``error: <message>``."""
