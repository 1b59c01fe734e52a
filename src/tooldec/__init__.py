"""tooldec: tool calls that are valid by construction (finite-state decoding for tool use).

At every decoding step the next-token distribution is masked so that a tool call can only name
a tool that exists and pass arguments that fit the tool's JSON Schema. Compile, then cursor:
``Compiler(vocab, dialect).compile(tools)`` gives an immutable ``Grammar`` that any number of
threads may share; a ``Machine`` per sequence walks it. Importing ``tooldec`` loads neither torch
nor transformers; ``tooldec.backends.hf`` and ``tooldec.runtime`` do.
"""

from tooldec.decoding import Compiler, Grammar, Machine, Mode
from tooldec.dialects.base import Dialect, ToolCall
from tooldec.errors import (
    BudgetError,
    DuplicateToolError,
    InvalidSchemaError,
    InvalidToolNameError,
    TokenizerError,
    ToolDecError,
    ToolNotFoundError,
    ToolRegistrationError,
    UnsupportedSchemaError,
)
from tooldec.tokens import Vocabulary, load_vocabulary
from tooldec.tools import Tool, ToolSet

__all__ = [
    "BudgetError",
    "Compiler",
    "Dialect",
    "DuplicateToolError",
    "Grammar",
    "InvalidSchemaError",
    "InvalidToolNameError",
    "Machine",
    "Mode",
    "TokenizerError",
    "Tool",
    "ToolCall",
    "ToolDecError",
    "ToolNotFoundError",
    "ToolRegistrationError",
    "ToolSet",
    "UnsupportedSchemaError",
    "Vocabulary",
    "load_vocabulary",
]
__version__ = "0.1.0"
