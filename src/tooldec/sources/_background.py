"""What the sources share: an asyncio event loop in a thread of its own, so a tool's function,
called synchronously from the runtime's executor threads, can drive an async client (the MCP SDK).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Coroutine, Mapping
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Protocol, Self, TypeVar

__all__ = ["BackgroundLoop", "Caller", "Closing"]

T = TypeVar("T")


class Source(Protocol):
    """What a tool's function calls through (an OpenAPI or MCP source)."""

    def call(self, name: str, arguments: Mapping[str, Any]) -> Any: ...


@dataclass(frozen=True)
class Caller:
    """A tool's function: calls ``name`` through its source with the arguments."""

    source: Source
    name: str

    def __call__(self, **arguments: Any) -> Any:
        return self.source.call(self.name, arguments)


class Closing:
    """``with`` support for what has a ``close``."""

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        self.close()


class BackgroundLoop:
    """A running event loop in a daemon thread; ``close`` stops it.

    Examples:
        >>> loop = BackgroundLoop("example")
        >>> async def three() -> int:
        ...     return 3
        >>> loop.run(three(), timeout=5)
        3
        >>> loop.close()
    """

    def __init__(self, name: str) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name=f"tooldec-{name}", daemon=True)
        self._thread.start()

    def submit(self, coroutine: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Start ``coroutine`` on the loop; its future can be waited on from any thread."""
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop)

    def run(self, coroutine: Coroutine[Any, Any, T], timeout: float | None) -> T:
        """Run ``coroutine`` on the loop and wait for its result; ``TimeoutError`` (the coroutine
        cancelled) when it is not done within ``timeout`` seconds."""
        future = self.submit(coroutine)
        try:
            return future.result(timeout)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise TimeoutError(f"no answer within {timeout:g} s") from None

    def close(self, timeout: float = 5.0) -> None:
        """Stop the loop and wait (at most ``timeout`` seconds) for its thread."""
        if self.loop.is_closed():
            return
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout)
        if not self._thread.is_alive():
            self.loop.close()
