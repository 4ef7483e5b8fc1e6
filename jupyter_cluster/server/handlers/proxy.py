"""The app proxy: web apps in main1 at ``cluster/proxy/{session}/{port}/``, owner only.

Any HTTP or WebSocket server listening in main1 (on its loopback or every address)
is reached through the Jupyter server, carried over the session's SSH connection
(:class:`~jupyter_cluster.reach.apps.AppTunnels`): nothing more is published on the
agent. Two forms:

- ``cluster/proxy/{session}/{port}/{path}``: the app sees ``/{path}`` (the prefix is
  removed; apps that use relative links, e.g. TensorBoard, work as they are);
- ``cluster/proxy-absolute/{session}/{port}/{path}``: the app sees the whole path, for
  apps started with a base URL (TensorBoard's ``--path_prefix``, Jupyter's
  ``--ServerApp.base_url``).

Only the session's owner (or an admin) gets through: another user's session is
404, an unauthenticated client 403. Requests and responses are streamed and left
as they are, but for the client's Jupyter credentials (its token and log-in
cookie), which are not passed on to the app. A port nothing listens on is a 502
page saying so. The server extension registers :data:`proxy_handlers` (in the
shared service too, where clients send a Hub token).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlparse

from jupyter_server.auth.decorator import authorized
from tornado import httputil, web
from tornado.httpclient import HTTPClientError, HTTPRequest
from tornado.ioloop import IOLoop
from tornado.iostream import StreamClosedError
from tornado.websocket import WebSocketClientConnection

from ...core.apps import parse_port
from ...core.models import Session
from ...errors import ClusterError
from ...reach.apps import app_host
from ..proxy_pages import (
    HOP_HEADERS,
    error_page,
    headers_for_app,
    no_reply_page,
    not_listening_page,
)
from .base import AUTH_RESOURCE, SessionScope, status_for
from .proxy_socket import CONNECT_TIMEOUT, WebSocketPipe

#: A proxied reply is sent on once this much waits, or FLUSH_AFTER seconds after its
#: first unsent byte (a stream's data waits at most that long).
FLUSH_BYTES = 64 << 10
FLUSH_AFTER = 0.05


class AppProxyHandler(WebSocketPipe, SessionScope):
    """Proxy HTTP and WebSocket requests to a port in a session's main1."""

    auth_resource = AUTH_RESOURCE

    def initialize(self, absolute: bool = False) -> None:
        self.absolute = absolute
        self.upstream: WebSocketClientConnection | None = None
        self._early: list[str | bytes] = []  # app messages before the client's upgrade
        self._gone = False

    async def prepare(self) -> None:  # type: ignore[override]
        # An unauthenticated client gets 403, not the log-in page (like the REST API).
        await super().prepare(_redirect_to_login=False)
        await self.service.ensure_started()

    def get_login_url(self) -> str:
        raise web.HTTPError(403)

    def check_origin(self, origin: str = "") -> bool:
        """The server's own origin rules (same host, or ``allow_origin``)."""
        return SessionScope.check_origin(self)

    def check_xsrf_cookie(self) -> None:
        """The app's own forms and scripts carry no Jupyter XSRF token: a request from
        the server's own origin (Origin or Referer) is let through instead."""
        try:
            super().check_xsrf_cookie()
        except web.HTTPError:
            sent = self.request.headers.get("Origin") or self.request.headers.get("Referer")
            if not sent or urlparse(sent).netloc != self.request.host:
                raise

    # -- where to -----------------------------------------------------------------------

    async def _target(self, ref: str, port_text: str) -> tuple[Session, int, str] | None:
        """(session, port, path the app sees); None after redirecting to the slash form."""
        session = await self.session(ref)
        port = parse_port(port_text, "port")
        path = self.request.path
        parts = path[len(self.base_url) :].split("/", 4)
        if len(parts) < 5:  # .../{port} without its slash: relative links would break
            query = f"?{self.request.query}" if self.request.query else ""
            self.redirect(path + "/" + query)
            return None
        inner = path if self.absolute else "/" + parts[4]
        if self.request.query:
            inner += "?" + self.request.query
        return session, port, inner

    def _app_headers(self) -> httputil.HTTPHeaders:
        """The client's headers for the app (see :func:`.proxy_pages.headers_for_app`)."""
        headers = httputil.HTTPHeaders()
        own = {self.identity_provider.get_cookie_name(self), "_xsrf"}
        passed = headers_for_app(self.request.headers.get_all(), self.token_authenticated, own)
        for name, value in passed:
            headers.add(name, value)
        return headers

    # -- HTTP ---------------------------------------------------------------------------

    async def _proxy(self, ref: str, port_text: str, rest: str | None = None) -> None:
        target = await self._target(ref, port_text)
        if target is None:
            return
        session, port, inner = target
        if self.request.headers.get("Upgrade", "").lower() == "websocket":
            await self._websocket(session, port, inner)
            return
        started = False
        status = httputil.ResponseStartLine("HTTP/1.1", 502, "Bad Gateway")
        received = httputil.HTTPHeaders()

        def on_header(line: str) -> None:
            nonlocal started, status, received
            if line.startswith("HTTP/"):
                status = httputil.parse_response_start_line(line.strip())
                received = httputil.HTTPHeaders()
            elif line.strip():
                received.parse_line(line)
            else:  # the end of the app's headers: they become the reply's
                started = True
                self.set_status(status.code, status.reason or "Unknown")
                self.clear_header("Content-Type")
                for name in {n for n, _ in received.get_all()}:
                    self.clear_header(name)
                for name, value in received.get_all():
                    if name.lower() not in HOP_HEADERS:
                        self.add_header(name, value)

        buffered = 0
        flush_later: object = None

        def flush() -> None:
            nonlocal buffered, flush_later
            if flush_later is not None:
                IOLoop.current().remove_timeout(flush_later)
            buffered, flush_later = 0, None
            if not self._finished and not self._gone:
                self.flush().add_done_callback(lambda f: f.exception())

        def on_chunk(chunk: bytes) -> None:
            # Sent when FLUSH_BYTES wait or FLUSH_AFTER passed (streams, e.g. server-sent
            # events, keep flowing); a small reply goes out whole with finish(): flushing
            # its head on its own costs the client a delayed ACK (about 20 ms a request).
            nonlocal buffered, flush_later
            if self._gone:
                raise StreamClosedError()  # the client left: stop reading the app
            self.write(chunk)
            buffered += len(chunk)
            if buffered >= FLUSH_BYTES:
                flush()
            elif flush_later is None:
                flush_later = IOLoop.current().call_later(FLUSH_AFTER, flush)

        method = self.request.method or "GET"
        request = HTTPRequest(
            f"http://{app_host(session.id)}:{port}{inner}",
            method=method,
            headers=self._app_headers(),
            body=None if method in ("GET", "HEAD") else self.request.body,
            follow_redirects=False,
            decompress_response=False,
            allow_nonstandard_methods=True,
            connect_timeout=CONNECT_TIMEOUT,
            request_timeout=0,
            header_callback=on_header,
            streaming_callback=on_chunk,
        )
        error: BaseException | None = None
        try:
            await self.service.apps.http.fetch(request, raise_error=False)
        except ClusterError:
            raise
        except (OSError, StreamClosedError, HTTPClientError) as exc:
            error = exc  # no reply, or it broke off
        if flush_later is not None:
            IOLoop.current().remove_timeout(flush_later)
        if started:
            if not self._finished:
                self.finish()
            return
        await self._failed(session, port, error)

    async def _failed(self, session: Session, port: int, error: Any) -> None:
        """The app gave no reply: the 502 page, saying whether the port is closed."""
        self.set_status(502)
        self.set_header("Content-Type", "text/html; charset=UTF-8")
        if not await self.service.apps.listening(session.id, port):
            self.finish(not_listening_page(session, port))
            return
        self.finish(no_reply_page(port, error))

    @web.authenticated
    @authorized
    async def get(self, ref: str, port: str, rest: str | None = None) -> None:  # type: ignore[override]
        await self._proxy(ref, port, rest)

    @web.authenticated
    @authorized
    async def head(self, ref: str, port: str, rest: str | None = None) -> None:
        await self._proxy(ref, port, rest)

    @web.authenticated
    @authorized
    async def post(self, ref: str, port: str, rest: str | None = None) -> None:
        await self._proxy(ref, port, rest)

    @web.authenticated
    @authorized
    async def put(self, ref: str, port: str, rest: str | None = None) -> None:
        await self._proxy(ref, port, rest)

    @web.authenticated
    @authorized
    async def patch(self, ref: str, port: str, rest: str | None = None) -> None:
        await self._proxy(ref, port, rest)

    @web.authenticated
    @authorized
    async def delete(self, ref: str, port: str, rest: str | None = None) -> None:
        await self._proxy(ref, port, rest)

    @web.authenticated
    @authorized
    async def options(self, ref: str, port: str, rest: str | None = None) -> None:
        await self._proxy(ref, port, rest)

    # -- errors -------------------------------------------------------------------------

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        """Errors as a short page (the client is usually a browser tab)."""
        exc_info = kwargs.get("exc_info")
        exc = exc_info[1] if exc_info else None
        message = self._reason
        if isinstance(exc, ClusterError):
            status_code = status_for(exc)
            self.set_status(status_code)
            message = exc.message
        elif isinstance(exc, web.HTTPError) and exc.log_message:
            message = exc.log_message
        self.set_header("Content-Type", "text/html; charset=UTF-8")
        self.finish(error_page(status_code, self._reason, message))

    def log_exception(self, typ: Any, value: Any, tb: Any) -> None:
        if isinstance(value, ClusterError):
            self.log.warning("%s %s: %s", self.request.method, self.request.path, value)
            return
        super().log_exception(typ, value, tb)


_PATH = r"/([^/]+)/([^/]+)(/.*)?"
#: (pattern, handler class, kwargs) relative to the base URL, for ExtensionApp.handlers.
proxy_handlers: list[tuple[str, type, dict[str, Any]]] = [
    ("cluster/proxy" + _PATH, AppProxyHandler, {"absolute": False}),
    ("cluster/proxy-absolute" + _PATH, AppProxyHandler, {"absolute": True}),
]

__all__ = ["AppProxyHandler", "proxy_handlers"]
