"""Serving tooldec behind an OpenAI-compatible endpoint: ``tooldec serve`` (:mod:`.app`) on
llama.cpp, and :mod:`.vllm` inside vLLM, both compiling tools with :mod:`.engine`. Importing this
package loads no web or ML framework. Threads: docs/DESIGN.md (concurrency contract)."""

from .assemble import Assembler, CallEvent, ContentEvent
from .engine import Compiled, Constraints, tools_key

__all__ = ["Assembler", "CallEvent", "Compiled", "Constraints", "ContentEvent", "tools_key"]
