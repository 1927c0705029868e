"""ASGI middleware of the server: ids routed as path-encoded segments, and security headers on every answer."""

from __future__ import annotations

from typing import Any, Awaitable, Callable, Mapping
from urllib.parse import quote, unquote_to_bytes

Scope = dict[str, Any]
ASGIApp = Callable[[Scope, Callable, Callable], Awaitable[None]]

# The page and API: scripts, styles, images and requests from this origin only; no inline script, no
# plugins, no framing, no <base> or form posts elsewhere.
PAGE_CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; "
            "connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
            "frame-ancestors 'none'")
SECURITY_HEADERS = {"x-content-type-options": "nosniff", "x-frame-options": "DENY",
                    "referrer-policy": "no-referrer", "cross-origin-opener-policy": "same-origin"}


class RawIdPaths:
    """Route ``prefix`` paths on their segments as sent, so an id may hold any character.

    ASGI servers decode the path before routing, so ``/api/papers/a%2Fb/figures/F1`` would be routed as
    four segments. Under ``prefix`` this rewrites ``scope["path"]`` to the raw path with every segment
    re-encoded canonically (percent-encoded UTF-8); endpoints decode each id with :func:`decode_id`.
    """

    def __init__(self, app: ASGIApp, prefix: str) -> None:
        self.app = app
        self.prefix = prefix

    async def __call__(self, scope: Scope, receive: Callable, send: Callable) -> None:
        if scope["type"] == "http" and scope.get("path", "").startswith(self.prefix):
            raw = scope.get("raw_path") or scope["path"].encode("utf-8")
            segments = raw.split(b"?", 1)[0].split(b"/")
            scope = {**scope, "path": "/".join(quote(unquote_to_bytes(s), safe="") for s in segments)}
        await self.app(scope, receive, send)


def decode_id(segment: str) -> str:
    """An id from its path segment as :class:`RawIdPaths` leaves it (invalid UTF-8 becomes U+FFFD)."""
    return unquote_to_bytes(segment).decode("utf-8", "replace")


class SecurityHeaders:
    """Adds the security headers, and a Content-Security-Policy (``csp_for(path)``), to every response."""

    def __init__(self, app: ASGIApp, csp_for: Callable[[str], str]) -> None:
        self.app = app
        self.csp_for = csp_for

    async def __call__(self, scope: Scope, receive: Callable, send: Callable) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        extra = [(k.encode(), v.encode()) for k, v in self._headers(scope.get("path", "")).items()]

        async def send_with_headers(message: Mapping[str, Any]) -> None:
            if message["type"] == "http.response.start":
                have = {k.lower() for k, _ in message.get("headers", [])}
                message = {**message, "headers": [*message.get("headers", []),
                                                  *((k, v) for k, v in extra if k not in have)]}
            await send(message)

        await self.app(scope, receive, send_with_headers)

    def _headers(self, path: str) -> dict[str, str]:
        return {"content-security-policy": self.csp_for(path), **SECURITY_HEADERS}
