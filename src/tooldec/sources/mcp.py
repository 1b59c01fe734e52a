"""The tools of an MCP server, listed and called through the official ``mcp`` SDK.

A schema tooldec must refuse is reported in ``refused`` (with the typed error) and the other tools
stay usable. The async SDK runs on an event loop in its own thread, so ``tools``, ``call`` and
``close`` are plain synchronous calls, safe from any thread.
"""

from __future__ import annotations

import concurrent.futures
import json
import shlex
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO, cast

from ..errors import ToolCallError, ToolRegistrationError, ToolSourceError
from ..tools import Tool
from ._background import BackgroundLoop, Caller, Closing

__all__ = ["MCPSource", "RefusedTool"]

_PAGES = 100  # tools/list pages read at most: a server whose cursor never ends cannot hang us
_STDERR_TAIL = 2000  # characters of a failed server's stderr quoted in the error
_CLOSE_SECONDS = 10.0  # to end a session (the SDK gives a stdio server a few seconds to exit)


@dataclass(frozen=True)
class RefusedTool:
    """A tool the server lists but tooldec cannot use, and why (the error names the keyword)."""

    name: str
    error: ToolRegistrationError


class MCPSource(Closing):
    """A connection to an MCP server and its tools.

    Args:
        server: A URL (streamable HTTP), or the command that starts the server (a string split as
            a shell would, or a list of arguments: stdio).
        env: Environment variables for a stdio server, over the SDK's minimal environment
            (``HOME``, ``PATH``...): pass what it needs (an API key), or ``env=os.environ`` for all
            of this process's (what ``tooldec run`` does, as VS Code does).
        timeout: Seconds to wait for one call (or one page of the tool listing).
        errlog: Where a stdio server's stderr goes (default: a temporary file, quoted in the
            error if the server fails to start).

    Raises:
        ToolSourceError: The server cannot be started or reached, or does not answer.

    Usage (tests/sources/test_mcp.py runs it against a real server)::

        with MCPSource("python my_server.py") as source:
            decoder = ToolDecoder(model, tokenizer, source.tools)
            result = decoder.run([{"role": "user", "content": "What is 2 + 3?"}])
    """

    def __init__(self, server: str | Sequence[str], *, env: Mapping[str, str] | None = None,
                 cwd: str | Path | None = None, timeout: float = 30.0, connect_timeout: float = 30.0,
                 errlog: TextIO | None = None) -> None:
        if not (timeout > 0 and connect_timeout > 0):
            raise ValueError(f"timeouts must be positive numbers of seconds, got {timeout!r}, {connect_timeout!r}")
        self.server = server if isinstance(server, str) else shlex.join(server)
        self.timeout = timeout
        target = self._transport(server, env, cwd)
        self._errlog = errlog if errlog is not None else cast(
            TextIO, tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace"))
        self._owns_errlog = errlog is None
        self._loop = BackgroundLoop("mcp")
        self._stop: Any = None  # the asyncio.Event that ends the session, made on the loop
        self._task: Any = None  # the task that holds the session
        self._client: Any = None
        self._connected: concurrent.futures.Future[None] = concurrent.futures.Future()
        self._session = self._loop.submit(self._hold(target))
        try:
            concurrent.futures.wait([self._connected, self._session], connect_timeout, concurrent.futures.FIRST_COMPLETED)
            if self._session.done():
                self._session.result()  # raises what ended the session
            if not self._connected.done():
                raise TimeoutError(f"no answer within {connect_timeout:g} s")
            listed = self._loop.run(self._list_tools(), connect_timeout)
        except BaseException as err:
            message = f"MCP server {self.server!r}: {_reason(err)}{self._stderr_tail()}"
            self.close()
            if isinstance(err, KeyboardInterrupt):
                raise
            raise ToolSourceError(message) from None
        self.tools: list[Tool] = []
        """The usable tools, in the order the server lists them; each calls the server."""
        self.refused: list[RefusedTool] = []
        """The tools whose schema tooldec refuses, with the error."""
        for spec in listed:
            try:
                tool = Tool.from_dict({"name": spec.name, "description": spec.description or "",
                                       "inputSchema": spec.input_schema})
            except ToolRegistrationError as err:
                self.refused.append(RefusedTool(spec.name, err))
                continue
            self.tools.append(Tool(tool.name, tool.description, tool.parameters, Caller(self, spec.name),
                                   source_parameters=tool.source_parameters))

    @staticmethod
    def _transport(server: str | Sequence[str], env: Mapping[str, str] | None, cwd: str | Path | None) -> Any:
        from mcp import StdioServerParameters

        if isinstance(server, str) and server.startswith(("http://", "https://")):
            return server
        argv = shlex.split(server) if isinstance(server, str) else list(server)
        if not argv:
            raise ToolSourceError("an MCP server needs a command or a URL")
        return StdioServerParameters(command=argv[0], args=argv[1:], env=dict(env) if env else None, cwd=cwd)

    async def _hold(self, target: Any) -> None:
        """The session, from connect to close, in one task (the SDK's cancel scopes want that)."""
        import asyncio

        from mcp import Client, StdioServerParameters
        from mcp.client.stdio import stdio_client

        self._stop = asyncio.Event()
        self._task = asyncio.current_task()
        transport = stdio_client(target, errlog=self._errlog) if isinstance(target, StdioServerParameters) else target
        # The SDK's own read timeout is a backstop; ``call`` gives up first, with one message.
        async with Client(transport, read_timeout_seconds=self.timeout + _CLOSE_SECONDS) as client:
            self._client = client
            self._connected.set_result(None)
            await self._stop.wait()

    async def _list_tools(self) -> list[Any]:
        tools: list[Any] = []
        cursor = None
        for _ in range(_PAGES):
            page = await self._client.list_tools(cursor=cursor)
            tools.extend(page.tools)
            cursor = page.next_cursor
            if cursor is None:
                break
        return tools

    def call(self, name: str, arguments: Mapping[str, Any]) -> Any:
        """Call a tool on the server and return what the model should read.

        Returns:
            The text of the result (text blocks joined by newlines; other blocks described in
            brackets), or its structured content.

        Raises:
            ToolCallError: The server answered ``isError``, or the call failed (the server is
                gone, a timeout, a protocol error); the message says which.
        """
        if self._client is None or self._session.done():
            raise ToolCallError(f"the MCP server {self.server!r} is not connected{self._stderr_tail()}")
        try:
            result = self._loop.run(self._client.call_tool(name, dict(arguments)), self.timeout)
        except Exception as err:
            raise ToolCallError(f"MCP call to {name} failed: {_reason(err)}") from None
        return observation(result)

    async def _end(self) -> None:
        """Let the session leave its ``async with`` (or cancel it while it still connects) and
        wait for it, so the SDK stops a stdio server before the loop goes away."""
        import asyncio

        if self._task is None:
            return
        if self._client is not None:
            self._stop.set()
        else:
            self._task.cancel()
        await asyncio.wait([self._task], timeout=_CLOSE_SECONDS - 1)

    def _stderr_tail(self) -> str:
        if not self._owns_errlog:
            return ""
        try:
            self._errlog.flush()
            self._errlog.seek(0)
            text = self._errlog.read()[-_STDERR_TAIL:].strip()
        except (OSError, ValueError):
            return ""
        return f"; its stderr ends with:\n{text}" if text else ""

    def close(self) -> None:
        """End the session (a stdio server is stopped) and the loop's thread."""
        if not self._loop.loop.is_closed() and not self._session.done():
            try:
                self._loop.run(self._end(), _CLOSE_SECONDS)
            except BaseException:
                pass
        self._client = None
        self._loop.close()
        if self._owns_errlog:
            self._errlog.close()


def observation(result: Any) -> Any:
    """What the model reads of a ``CallToolResult``: its text blocks, or its structured content
    when there is no text or the text is only that content as JSON (as the SDK writes it).
    Images, audio and binary resources are named, not inlined; ``isError`` is a ``ToolCallError``."""
    parts = [_block_text(block) for block in result.content]
    text = "\n".join(parts)
    if result.is_error:
        raise ToolCallError(text or "the tool reported an error without a message")
    structured = result.structured_content
    if structured is not None and (not parts or _same_json(text, structured)):
        return structured
    return text


def _block_text(block: Any) -> str:
    kind = getattr(block, "type", "")
    if kind == "text":
        return str(block.text)
    if kind in ("image", "audio"):
        return f"[{kind} {block.mime_type}, {len(block.data) * 3 // 4} bytes]"
    if kind == "resource_link":
        return f"[resource {block.uri}]"
    if kind == "resource":
        resource = block.resource
        text = getattr(resource, "text", None)
        return str(text) if text is not None else f"[resource {resource.uri} ({resource.mime_type or 'binary'})]"
    return f"[{kind or type(block).__name__} content]"


def _same_json(text: str, value: Any) -> bool:
    try:
        return bool(json.loads(text) == value)
    except ValueError:
        return False


def _reason(err: BaseException | None) -> str:
    """The innermost message of an error, through the exception groups anyio raises."""
    while isinstance(getattr(err, "exceptions", None), (list, tuple)) and err.exceptions:  # type: ignore[union-attr]
        err = err.exceptions[0]  # type: ignore[union-attr]
    if err is None:
        return "unknown error"
    message = str(err) or type(err).__name__
    return message if isinstance(err, ToolSourceError) else f"{type(err).__name__}: {message}"
