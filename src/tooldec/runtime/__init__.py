"""Running the tools a model calls, and the loop that feeds their results back.

``ToolDecoder`` needs a transformers model (torch is imported when one is made, not here).
"""

from .executor import Executor, serialize_result
from .loop import Conversation, ToolDecoder, forced_start, tool_instructions
from .trace import CallRecord, Event, EventKind, InvalidCall, InvalidKind, Result, Trace

__all__ = [
    "CallRecord",
    "Conversation",
    "Event",
    "EventKind",
    "Executor",
    "InvalidCall",
    "InvalidKind",
    "Result",
    "ToolDecoder",
    "Trace",
    "forced_start",
    "serialize_result",
    "tool_instructions",
]
