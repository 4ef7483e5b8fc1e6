"""Web apps in main1: ports inside main1 reached over the session's SSH connection.

Used by the app proxy (``cluster/proxy/{session}/{port}/``,
:mod:`jupyter_cluster.server.handlers.proxy`) of the server, and of the shared
service in team mode. Per session, one SSH connection to main1 (as its owner,
with the session's keys, main1's host key checked strictly;
:class:`~jupyter_cluster.client.shell.ContainerShell`) carries every proxied
request: a port is forwarded from a Unix socket in a private (0700) directory of
this machine to ``127.0.0.1:{port}`` inside main1 (SSH's direct-tcpip
channels), so nothing more is published on the agent and no other user of this
machine can connect (a loopback TCP port would be open to all of them).

The HTTP client of the proxy connects to those sockets through :class:`AppResolver`.
The service closes a session's tunnels when the session ends and all of them when
the server stops.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
from collections.abc import Awaitable, Callable
from typing import Any

from tornado.netutil import Resolver
from tornado.simple_httpclient import SimpleAsyncHTTPClient

from .. import private_dirs
from ..client.shell import ContainerShell
from ..core.access import Access
from ..errors import AgentError
from ..sshlib import asyncssh
from .tunnel import no_delay

#: The host name the proxy's HTTP client asks for: ``{session id}.main1.invalid``.
HOST_SUFFIX = ".main1.invalid"
#: Proxied requests in progress at once, all sessions together (more wait their turn).
MAX_REQUESTS = 200
#: Bytes of one proxied response (streamed, never held in memory).
MAX_BODY = 1 << 40


class _SessionApps:
    """One session's SSH connection to main1 and its forwarded ports."""

    def __init__(self, access: Access) -> None:
        self.shell = ContainerShell(access)
        self.held = private_dirs.make("apps-")
        self.dir = self.held.path
        self.listeners: dict[int, asyncssh.SSHListener] = {}
        self.conn: asyncssh.SSHClientConnection | None = None
        #: One connection attempt at a time per session (others' requests go on).
        self.lock = asyncio.Lock()

    async def close(self) -> None:
        for listener in self.listeners.values():
            listener.close()
        self.listeners.clear()
        await self.shell.close()
        self.held.remove()


class AppTunnels:
    """Unix sockets forwarded to ports in main1, per session (see the module docstring)."""

    def __init__(self, access: Callable[[str], Awaitable[Access]]) -> None:
        """``access``: main1's SSH endpoint and the session's keys (``Engine.access``)."""
        self.access = access
        self._sessions: dict[str, _SessionApps] = {}
        self._lock = asyncio.Lock()
        self._http: SimpleAsyncHTTPClient | None = None
        self.resolver = AppResolver(tunnels=self)

    @property
    def http(self) -> SimpleAsyncHTTPClient:
        """The proxy's HTTP client: its connections go to main1 through :attr:`resolver`."""
        if self._http is None:
            self._http = SimpleAsyncHTTPClient(
                force_instance=True,
                resolver=self.resolver,
                max_clients=MAX_REQUESTS,
                max_body_size=MAX_BODY,
            )
        return self._http

    async def _session(self, session_id: str) -> _SessionApps:
        apps = self._sessions.get(session_id)
        if apps is None:
            apps = _SessionApps(await self.access(session_id))
            self._sessions[session_id] = apps
        return apps

    async def socket_path(self, session_id: str, port: int) -> str:
        """The Unix socket forwarded to ``port`` in main1 (made on first use; a dropped
        SSH connection is made again)."""
        async with self._lock:  # only finding the session's entry waits on others
            apps = await self._session(session_id)
        async with apps.lock:
            conn = await apps.shell.connection("main1")
            if conn is not apps.conn:  # new, or reconnected: the old listeners are gone
                for listener in apps.listeners.values():
                    listener.close()
                apps.listeners.clear()
                apps.conn = conn
                await no_delay(conn)  # else each small reply may wait 40 ms
            path = os.path.join(apps.dir, f"{port}.sock")
            if port not in apps.listeners:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(path)
                try:
                    apps.listeners[port] = await conn.forward_local_path_to_port(
                        path, "127.0.0.1", port
                    )
                except (OSError, asyncssh.Error) as exc:
                    raise AgentError(f"cannot forward port {port} of main1 ({exc})") from exc
            return path

    async def listening(self, session_id: str, port: int) -> bool:
        """Whether something in main1 accepts connections on ``port`` (asked after a
        proxied request failed, to tell a closed port from a broken app)."""
        apps = await self._session(session_id)
        conn = await apps.shell.connection("main1")
        try:
            _reader, writer = await conn.open_connection("127.0.0.1", port)
        except asyncssh.ChannelOpenError:
            return False
        writer.close()
        return True

    async def close_session(self, session_id: str) -> None:
        """Close the session's connection and remove its sockets (the session ended)."""
        apps = self._sessions.pop(session_id, None)
        if apps is not None:
            await apps.close()

    async def close_all(self) -> None:
        """Close every session's connection (the server stops)."""
        for session_id in list(self._sessions):
            await self.close_session(session_id)
        if self._http is not None:
            self._http.close()
            self._http = None


def app_host(session_id: str) -> str:
    """The host name of the proxy's requests to ``session_id``'s main1."""
    return session_id + HOST_SUFFIX


class AppResolver(Resolver):
    """Resolves ``{session id}.main1.invalid`` and a port to the Unix socket forwarded
    to that port in the session's main1 (for tornado's HTTP and WebSocket clients)."""

    def initialize(self, tunnels: AppTunnels) -> None:
        self.tunnels = tunnels

    async def resolve(
        self, host: str, port: int, family: socket.AddressFamily = socket.AF_UNSPEC
    ) -> list[tuple[int, Any]]:
        if not host.endswith(HOST_SUFFIX):
            raise OSError(f"the app proxy reaches only main1, not {host}")
        path = await self.tunnels.socket_path(host[: -len(HOST_SUFFIX)], port)
        return [(socket.AF_UNIX, path)]
