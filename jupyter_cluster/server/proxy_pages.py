"""The app proxy's pure parts: which headers pass, and the pages it answers itself.

Used by :mod:`jupyter_cluster.server.handlers.proxy`: hop-by-hop headers never pass
either way; the client's Jupyter credentials (token, log-in and XSRF cookies) are
not handed to the app; a port nothing listens on, an app that gave no reply and the
proxy's own errors are short HTML pages (the client is usually a browser tab).
"""

from __future__ import annotations

import html
from collections.abc import Iterable
from http.cookies import SimpleCookie

from ..core.models import Session

#: Headers of one hop only (RFC 9110 7.6.1), never passed through.
HOP_HEADERS = {
    "connection",
    "keep-alive",
    "proxy-authenticate",
    "proxy-authorization",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "content-length",
}


def headers_for_app(
    headers: Iterable[tuple[str, str]], token_authenticated: bool, own_cookies: set[str]
) -> list[tuple[str, str]]:
    """The client's headers as the app gets them: no hop-by-hop or WebSocket handshake
    headers, no ``Authorization`` that authenticated the client, no ``own_cookies``."""
    passed = []
    for name, value in headers:
        low = name.lower()
        if low in HOP_HEADERS or low.startswith("sec-websocket-"):
            continue
        if low == "authorization" and token_authenticated:
            continue
        if low == "cookie":
            value = cookies_without(value, own_cookies)
            if not value:
                continue
        passed.append((name, value))
    return passed


def cookies_without(header: str, names: set[str]) -> str:
    """A ``Cookie`` header without the cookies ``names`` (unparsable: as it is)."""
    jar: SimpleCookie = SimpleCookie()
    try:
        jar.load(header)
    except Exception:
        return header
    return "; ".join(f"{k}={m.coded_value}" for k, m in jar.items() if k not in names)


def not_listening_page(session: Session, port: int) -> str:
    """The 502 page of a port nothing listens on in main1."""
    name = html.escape(session.name)
    return (
        "<!DOCTYPE html><html><head><meta charset='utf-8'><title>502: port "
        f"{port} is not listening</title></head><body><h1>Nothing listens on port {port} "
        f"in main1</h1><p>Session <b>{name}</b> is running, but no app in its main1 "
        f"container accepts connections on port {port}.</p><p>Start the app in main1 "
        "(in the session's notebook or a terminal into main1) listening on that port, "
        f"on 127.0.0.1 or 0.0.0.0, e.g. <code>tensorboard --logdir runs --port {port}</code> "
        f"or <code>python3 -m http.server {port}</code>; then reload this page.</p>"
        "</body></html>"
    )


def no_reply_page(port: int, error: object) -> str:
    """The 502 page of an app that listens but gave no reply."""
    why = html.escape(str(error or "no reply"))
    return (
        f"<!DOCTYPE html><html><body><h1>The app on port {port} in main1 gave no "
        f"reply</h1><p>{why}</p></body></html>"
    )


def error_page(status_code: int, reason: str, message: str) -> str:
    """The page of the proxy's own errors (403, 404, 400 on the port…)."""
    return (
        f"<!DOCTYPE html><html><body><h1>{status_code}: {html.escape(reason)}"
        f"</h1><p>{html.escape(message)}</p></body></html>"
    )
