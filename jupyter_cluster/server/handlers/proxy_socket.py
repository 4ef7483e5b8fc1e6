"""The WebSocket half of the app proxy: a client's WebSocket piped to one in main1.

:class:`WebSocketPipe` is a base of :class:`~.proxy.AppProxyHandler`: on an upgrade
request it first connects to the app over the session's SSH connection (so a port
nothing listens on is still a 502 page, not a broken socket), then accepts the
client's upgrade with the subprotocol the app chose, and passes messages both ways
frame by frame (what the app sends before the client's side is open is kept).
"""

from __future__ import annotations

from typing import Any

from tornado import httputil
from tornado.httpclient import HTTPClientError, HTTPRequest
from tornado.iostream import StreamClosedError
from tornado.websocket import WebSocketClientConnection, WebSocketHandler, websocket_connect

from ...core.models import Session
from ...errors import ClusterError
from ...reach.apps import app_host

#: Seconds to reach main1 (an SSH connection is made on a session's first request).
CONNECT_TIMEOUT = 40.0
#: Bytes of one WebSocket message either way.
MAX_MESSAGE = 64 << 20


class WebSocketPipe(WebSocketHandler):
    """The WebSocket side of the proxy (the handler provides ``service``,
    ``_app_headers`` and ``_failed``)."""

    upstream: WebSocketClientConnection | None
    _early: list[str | bytes]
    _gone: bool
    service: Any

    def _app_headers(self) -> httputil.HTTPHeaders:
        raise NotImplementedError

    async def _failed(self, session: Session, port: int, error: Any) -> None:
        raise NotImplementedError

    async def _websocket(self, session: Session, port: int, inner: str) -> None:
        """Connect to the app first (so a closed port is a 502 page), then accept."""
        offered = self.request.headers.get("Sec-WebSocket-Protocol", "")
        request = HTTPRequest(
            f"ws://{app_host(session.id)}:{port}{inner}",
            headers=self._app_headers(),
            connect_timeout=CONNECT_TIMEOUT,
        )
        try:
            self.upstream = await websocket_connect(
                request,
                on_message_callback=self._from_app,
                subprotocols=[p.strip() for p in offered.split(",") if p.strip()] or None,
                resolver=self.service.apps.resolver,
                max_message_size=MAX_MESSAGE,
            )
        except ClusterError:
            raise
        except HTTPClientError as exc:
            if exc.code != 599:  # the app answered, but refused the upgrade
                self.set_status(exc.code if exc.code < 600 else 502)
                self.finish(f"the app refused the WebSocket: {exc}")
                return
            await self._failed(session, port, exc)
            return
        except (OSError, StreamClosedError) as exc:
            await self._failed(session, port, exc)
            return
        await WebSocketHandler.get(self)

    def select_subprotocol(self, subprotocols: list[str]) -> str | None:
        chosen = self.upstream.selected_subprotocol if self.upstream else None
        return chosen if chosen in subprotocols else None

    def open(self, *args: Any, **kwargs: Any) -> None:
        for message in self._early:
            self._to_client(message)
        self._early.clear()

    def _from_app(self, message: str | bytes | None) -> None:
        if message is None:  # the app closed it
            if self.ws_connection is not None:
                self.close()
            return
        if self.ws_connection is None:
            self._early.append(message)
            return
        self._to_client(message)

    def _to_client(self, message: str | bytes) -> None:
        try:
            self.write_message(message, binary=isinstance(message, bytes))
        except Exception:
            self.close()

    async def on_message(self, message: str | bytes) -> None:
        if self.upstream is None:
            return
        try:
            await self.upstream.write_message(message, binary=isinstance(message, bytes))
        except Exception:
            self.close()

    def on_close(self) -> None:
        if self.upstream is not None:
            self.upstream.close()
            self.upstream = None

    def on_connection_close(self) -> None:
        self._gone = True
        super().on_connection_close()
