"""Running the tools a model calls, and the loop that feeds their results back."""

from .executor import Executor, clean_text, describe_exception, serialize_result
from .limits import context_window, truncate_tokens
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
    "clean_text",
    "context_window",
    "describe_exception",
    "forced_start",
    "serialize_result",
    "tool_instructions",
    "truncate_tokens",
]
