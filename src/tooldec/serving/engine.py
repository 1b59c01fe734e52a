"""Request tool lists compiled for serving (``tooldec serve``, the vLLM processor): validated,
compiled once per list, cached by key. Which thread may call what: docs/DESIGN.md, concurrency contract."""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..decoding import Compiler, Grammar, Machine
from ..dialects import Dialect
from ..errors import ToolRegistrationError
from ..tokens import Vocabulary
from ..tools import ToolSet

__all__ = ["Compiled", "Constraints", "tools_key"]

ToolSpecs = Sequence[Mapping[str, Any]]


def tools_key(specs: ToolSpecs) -> str:
    """A stable key for a tool list: the SHA-256 of its canonical JSON (sorted keys).

    Examples:
        >>> tools_key([{"name": "f", "parameters": {}}]) == tools_key([{"parameters": {}, "name": "f"}])
        True
    """
    text = json.dumps(list(specs), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class Compiled:
    """A request's tool list (its :func:`tools_key` ``key``), validated and compiled."""

    key: str
    tools: ToolSet
    grammar: Grammar


class Constraints:
    """Compiled grammars for one vocabulary (padded to the logits width) and dialect, the
    ``cache_size`` last used kept under a lock, and the cursors over them.

    Examples:
        >>> from tooldec.dialects import Hermes
        >>> vocab = Vocabulary.from_tokens([bytes([b]) for b in range(256)])
        >>> constraints = Constraints(vocab, Hermes())
        >>> spec = {"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}
        >>> compiled = constraints.compile([spec])
        >>> constraints.compile([spec]) is compiled, constraints.cached
        (True, 1)
    """

    def __init__(self, vocab: Vocabulary, dialect: Dialect, *, cache_size: int = 64) -> None:
        if cache_size < 1:
            raise ValueError(f"cache_size must be >= 1, got {cache_size}")
        self.vocab = vocab
        self.dialect = dialect
        self.compiler = Compiler(vocab, dialect)  # the vocabulary prepared once; tools compiled once by schema
        self.cache_size = cache_size
        self._cache: OrderedDict[str, Compiled] = OrderedDict()
        self._lock = threading.Lock()

    @property
    def cached(self) -> int:
        """How many compiled tool lists the cache holds."""
        return len(self._cache)

    def tools(self, specs: ToolSpecs) -> ToolSet:
        """Validate a request's tools (OpenAI, MCP, Anthropic or plain dicts): a
        ``ToolRegistrationError`` names a tool that is malformed, duplicated, has a bad schema or
        cannot be written in this dialect."""
        if not isinstance(specs, Sequence) or isinstance(specs, (str, bytes)):
            raise ToolRegistrationError(f"tools must be a list of tool definitions, got {type(specs).__name__}")
        for spec in specs:
            if not isinstance(spec, Mapping):
                raise ToolRegistrationError(f"a tool definition must be an object, got {type(spec).__name__}")
        toolset = ToolSet(specs)
        for tool in toolset:
            self.compiler.check(tool)
        return toolset

    def compile(self, specs: ToolSpecs, key: str | None = None) -> Compiled:
        """The compiled grammar of ``specs``, cached by :func:`tools_key` (or the caller's ``key``);
        raises as :meth:`tools`."""
        key = key or tools_key(specs)
        with self._lock:
            hit = self._cache.get(key)
            if hit is not None:
                self._cache.move_to_end(key)
                return hit
        toolset = self.tools(specs)
        compiled = Compiled(key, toolset, self.compiler.compile(toolset))
        with self._lock:
            self._cache[key] = compiled
            while len(self._cache) > self.cache_size:
                self._cache.popitem(last=False)
        return compiled

    def machine(self, compiled: Compiled, *, tool_choice: str = "auto", parallel_tool_calls: bool = True,
                max_calls: int | None = None) -> Machine:
        """A fresh cursor for one sequence (``ToolNotFoundError``: ``tool_choice`` names no tool)."""
        return Machine(compiled.grammar, tool_choice=tool_choice, parallel_tool_calls=parallel_tool_calls,
                       max_calls=max_calls)
