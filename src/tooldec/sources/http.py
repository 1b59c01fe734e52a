"""The operations of an OpenAPI document as tools that make their HTTP requests (with ``httpx``).

Path values are percent-encoded whole (dots too when a value is only dots), so that no value can
change the path (``../admin`` stays one segment); header values with a line break are refused.

Credentials come from ``credentials`` (security scheme name -> secret) or, for a scheme not given
there, from the environment variable ``TOOLDEC_AUTH_<SCHEME>`` (TMDB's ``api_key`` scheme reads
``TOOLDEC_AUTH_API_KEY``), and are sent as the scheme says to the operations that require it.

A response is the observation. A status outside 2xx, a timeout or a network error is the call's
``ToolCallError``. Redirects to another scheme, host or port are reported, not followed
(credentials must not leak).
"""

from __future__ import annotations

import base64
import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import quote

from ..errors import ToolCallError, ToolSourceError
from ..tools import Tool
from ..tools.openapi import Naming, Operation, openapi_operations
from ._background import Caller, Closing

__all__ = ["OpenAPISource"]

_REDIRECTS = 5
_ERROR_BODY = 2000  # characters of an error response quoted in the observation


class OpenAPISource(Closing):
    """An HTTP API described by an OpenAPI 3 document, its operations as callable tools.

    Args:
        spec: The parsed document, or the path of a JSON or YAML file.
        base_url: Where the API is (default: the document's first ``servers`` URL).
        credentials: Security scheme name -> secret (see the module docstring).
        names: Names chosen elsewhere, by ``"METHOD /path"``; they win over ``naming``
            (``tooldec.runtime.naming.rewrite_names`` writes them from the documentation).
        transport: An ``httpx`` transport (tests, proxies); default: the network.

    Raises:
        ToolRegistrationError: An operation cannot be made a tool.
        ToolSourceError: No usable base URL, an unknown credential, or an unreadable file.

    Usage (tests/sources/test_http.py runs it against a local server)::

        with OpenAPISource("tmdb.yaml", credentials={"api_key": "..."}) as api:
            decoder = ToolDecoder(model, tokenizer, api.tools)
    """

    def __init__(self, spec: Mapping[str, Any] | str | Path, *, base_url: str | None = None,
                 headers: Mapping[str, str] | None = None, credentials: Mapping[str, str] | None = None,
                 environ: Mapping[str, str] | None = None, timeout: float = 10.0,
                 max_response_bytes: int = 1_000_000, naming: Naming = "operation_id",
                 names: Mapping[str, str] | None = None, transport: Any = None) -> None:
        import httpx

        from .files import read_document

        document: Mapping[str, Any] = spec if isinstance(spec, Mapping) else read_document(Path(spec))
        if not timeout > 0 or max_response_bytes < 1:
            raise ValueError(f"timeout and max_response_bytes must be positive, got {timeout!r}, {max_response_bytes!r}")
        self.operations: list[Operation] = openapi_operations(document, naming=naming, names=names)
        """The operations, with where each argument goes."""
        self.max_response_bytes = max_response_bytes
        self.timeout = timeout
        self._bases = {op.tool.name: _base_url(op, base_url) for op in self.operations}
        self._schemes = _schemes(document, credentials or {}, os.environ if environ is None else environ)
        for name, value in (headers or {}).items():
            _check_header(name, value)
        self._client = httpx.Client(headers=dict(headers or {}), timeout=timeout, follow_redirects=False,
                                    transport=transport)
        self._by_name = {op.tool.name: op for op in self.operations}
        self.tools: list[Tool] = [
            Tool(op.tool.name, op.tool.description, op.tool.parameters, Caller(self, op.tool.name),
                 source_parameters=op.tool.source_parameters) for op in self.operations]
        """One tool per operation, in document order; each makes its request."""

    def call(self, name: str, arguments: Mapping[str, Any]) -> Any:
        """Make the request of operation ``name`` and return what the model should read.

        Raises:
            ToolCallError: A status outside 2xx, a redirect to another host, a timeout, a
                network error, or an argument that cannot be sent (a line break in a header).
        """
        import httpx

        op = self._by_name[name]
        request = self._request(op, arguments)
        described = f"{request.method} {request.url.copy_with(query=None)}"
        try:
            for _ in range(_REDIRECTS + 1):
                response = self._client.send(request, stream=True)
                try:
                    body, cut = _read(response, self.max_response_bytes)
                finally:
                    response.close()
                if not response.is_redirect:
                    return _result(response, body, cut, described)
                target = response.next_request
                if target is None or _origin(target.url) != _origin(request.url):
                    where = response.headers.get("location", "?")
                    raise ToolCallError(f"{described}: HTTP {response.status_code} redirects to {where}, "
                                        "another host: not followed")
                request = target
            raise ToolCallError(f"{described}: more than {_REDIRECTS} redirects")
        except httpx.TimeoutException:
            raise ToolCallError(f"{described}: no answer within {self.timeout:g} s") from None
        except httpx.HTTPError as err:
            raise ToolCallError(f"{described}: {type(err).__name__}: {err}") from None

    def _request(self, op: Operation, arguments: Mapping[str, Any]) -> Any:
        path, headers, cookies = op.path, {}, []
        query: list[tuple[str, str | int | float | bool | None]] = []
        body: Any = None
        for key, value in arguments.items():
            if key not in op.arguments or value is None:
                continue
            where = op.arguments[key]
            if where.location == "path":
                path = path.replace("{" + where.name + "}", _path_value(value))
            elif where.location == "query":
                query.extend(_query_pairs(where.name, value, where.explode))
            elif where.location == "header":
                headers[where.name] = _check_header(where.name, _text(value, ","))
            elif where.name:
                body = {} if body is None else body
                body[where.name] = value
            else:
                body = value
        required = set() if op.security == () else None if op.security is None else set(op.security)
        for scheme, (place, key, value) in self._schemes.items():
            if required is not None and scheme not in required:
                continue
            if place == "query":
                query.append((key, value))
            elif place == "cookie":
                cookies.append(f"{key}={value}")
            else:
                headers[key] = value
        if cookies:
            headers["Cookie"] = "; ".join(cookies)
        return self._client.build_request(op.method, self._bases[op.tool.name] + path, params=query, headers=headers,
                                          json=body)

    def close(self) -> None:
        """Close the HTTP connections."""
        self._client.close()


def _base_url(op: Operation, override: str | None) -> str:
    url = override or (op.servers[0] if op.servers else "")
    if not re.match(r"https?://[^/]", url):
        given = f"its server URL is {url!r}" if url else "the document has no servers"
        raise ToolSourceError(f"{op.method} {op.path}: no absolute base URL ({given}); pass base_url= (or --base-url)")
    return url.rstrip("/")


def _schemes(spec: Mapping[str, Any], given: Mapping[str, str],
             environ: Mapping[str, str]) -> dict[str, tuple[str, str, str]]:
    """Security scheme name -> (where, name, value) for each scheme with a credential."""
    declared = ((spec.get("components") or {}).get("securitySchemes") or {}) if isinstance(spec, Mapping) else {}
    unknown = sorted(set(given) - set(declared))
    if unknown:
        raise ToolSourceError(f"no security scheme named {unknown[0]!r}; the document has {sorted(declared) or 'none'}")
    out: dict[str, tuple[str, str, str]] = {}
    for name, scheme in declared.items():
        secret = given.get(name) or environ.get("TOOLDEC_AUTH_" + re.sub(r"[^A-Za-z0-9]", "_", name).upper())
        if not secret or not isinstance(scheme, Mapping):
            continue
        kind = scheme.get("type")
        if kind == "apiKey":
            out[name] = (str(scheme.get("in", "header")), str(scheme.get("name", "")), secret)
        elif kind == "http" and str(scheme.get("scheme", "")).lower() == "basic":
            out[name] = ("header", "Authorization", "Basic " + base64.b64encode(secret.encode()).decode())
        elif kind == "http" and str(scheme.get("scheme", "")).lower() != "bearer":
            out[name] = ("header", "Authorization", f"{scheme.get('scheme')} {secret}")
        else:  # http bearer, oauth2, openIdConnect: a bearer token
            out[name] = ("header", "Authorization", f"Bearer {secret}")
    for place, key, value in out.values():
        if place == "header":
            _check_header(key, value)
    return out


def _text(value: Any, separator: str) -> str:
    """A value as it is written in a URL or header (OpenAPI's simple style for arrays and objects)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return separator.join(_text(v, separator) for v in value)
    if isinstance(value, dict):
        return separator.join(f"{k}{separator}{_text(v, separator)}" for k, v in value.items())
    return json.dumps(value)


def _path_value(value: Any) -> str:
    """A path parameter as one segment: every reserved character encoded, and dots too when the
    value is only dots (``..`` would otherwise climb a level)."""
    encoded = quote(_text(value, ","), safe="")
    return encoded.replace(".", "%2E") if set(encoded) <= {"."} else encoded


def _query_pairs(name: str, value: Any, explode: bool) -> list[tuple[str, str | int | float | bool | None]]:
    if isinstance(value, list) and explode:
        return [(name, _text(v, ",")) for v in value]
    if isinstance(value, dict) and explode:
        return [(str(k), _text(v, ",")) for k, v in value.items()]
    return [(name, _text(value, ","))]


def _check_header(name: str, value: str) -> str:
    if re.search(r"[\r\n\0]", name + value):
        raise ToolCallError(f"header {name!r}: a line break or NUL cannot be sent in a header")
    return value


def _origin(url: Any) -> tuple[str, str, int | None]:
    return url.scheme, url.host, url.port


def _read(response: Any, limit: int) -> tuple[bytes, bool]:
    """The body, at most ``limit`` bytes; and whether it was longer."""
    chunks, size = [], 0
    for chunk in response.iter_bytes():
        chunks.append(chunk)
        size += len(chunk)
        if size > limit:
            return b"".join(chunks)[:limit], True
    return b"".join(chunks), False


def _result(response: Any, body: bytes, cut: bool, described: str) -> Any:
    text = body.decode(response.encoding or "utf-8", errors="replace")
    note = f"\n[the response was cut at {len(body)} bytes]" if cut else ""
    if not response.is_success:
        reason = f" {response.reason_phrase}" if response.reason_phrase else ""
        quoted = f": {text[:_ERROR_BODY]}" if text.strip() else ""
        raise ToolCallError(f"{described}: HTTP {response.status_code}{reason}{quoted}")
    if not body:
        return f"HTTP {response.status_code} (no content)"
    if "json" in response.headers.get("content-type", "") and not cut:
        try:
            return json.loads(text)
        except ValueError:
            pass
    return text + note
