"""Who may call ``tooldec serve``: an API key, checked as OpenAI's clients send it, and which
addresses are safe to listen on without one."""

from __future__ import annotations

import hmac
import ipaddress
import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from .protocol import error_body

__all__ = ["OPEN_PATHS", "ApiKey", "is_loopback"]

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]

OPEN_PATHS = frozenset({"/health"})
"""Answered without the key: a load balancer's probe carries none."""


def is_loopback(host: str) -> bool:
    """Whether only this machine can reach ``host``.

    Examples:
        >>> is_loopback("127.0.0.1"), is_loopback("::1"), is_loopback("localhost"), is_loopback("0.0.0.0")
        (True, True, True, False)
    """
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:  # a host name: it may resolve anywhere
        return False


class ApiKey:
    """ASGI middleware: every request but :data:`OPEN_PATHS` carries ``Authorization: Bearer
    <key>``, or is answered 401 in OpenAI's error shape (the key compared in constant time)."""

    def __init__(self, app: Callable[[Scope, Receive, Send], Awaitable[None]], key: str) -> None:
        if not key:
            raise ValueError("the API key is empty")
        self.app = app
        self.expected = f"Bearer {key}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] in OPEN_PATHS or self._authorized(scope):
            await self.app(scope, receive, send)
            return
        body = json.dumps(error_body("Incorrect or missing API key: send it as 'Authorization: Bearer <key>'",
                                     code="invalid_api_key")).encode()
        await send({"type": "http.response.start", "status": 401, "headers": [
            (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
            (b"www-authenticate", b"Bearer")]})
        await send({"type": "http.response.body", "body": body})

    def _authorized(self, scope: Scope) -> bool:
        given = next((value for name, value in scope["headers"] if name == b"authorization"), b"")
        return hmac.compare_digest(given, self.expected)
