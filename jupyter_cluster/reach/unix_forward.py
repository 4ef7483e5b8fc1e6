"""Local Unix sockets forwarded over SSH to Unix sockets in main1, held open until
the far end exists.

Used by :class:`~.tunnel.KernelTunnel` for the kernel's ports. asyncssh's own
``forward_local_path`` closes a local connection at once when the far socket does
not exist yet, which is the rule while a kernel is still importing: ZMQ then
reconnects only after its ``reconnect_ivl`` (100 ms), each socket on its own
clock. So a client's IOPub subscription often reached the kernel after the kernel
had answered the first ``kernel_info`` and published busy/idle for it, and
jupyter_client's ``wait_for_ready`` (as papermill, nbclient and the bench use it)
spent 0.2 s waiting for IOPub and another round on a second request.

Here a local connection is held: what the client sent is kept, the far socket is
asked for again every :data:`OPEN_RETRY` seconds (less often after a while), and
the bytes flow once it opens.
Connections to the *lead* socket (IOPub) open first: the others wait while one to
the lead is still pending, so the subscription is on its way before the request
whose answer it must see.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Callable, Sequence

from ..asyncwait import wait_set
from ..sshlib import asyncssh

#: Seconds between attempts to open a far socket that does not exist yet, for the
#: first :data:`OPEN_FAST_FOR` seconds (a kernel importing); then every
#: :data:`OPEN_SLOW_RETRY` (ZMQ's own reconnection interval), so a client left
#: connected to a kernel that died costs sshd in main1 no more than it did.
OPEN_RETRY, OPEN_FAST_FOR, OPEN_SLOW_RETRY = 0.02, 5.0, 0.1
#: Seconds a local connection is held for a far socket that never appears; then it
#: is closed (the client reconnects, and waits again).
OPEN_PATIENCE = 30.0
#: Most seconds a connection waits for a pending one to the lead socket.
LEAD_WAIT = 2.0


class _Far(asyncssh.SSHUNIXSession[bytes]):
    """The SSH channel's end of one forwarded connection: writes to the local one."""

    def __init__(self, near: _Near) -> None:
        self.near = near

    def data_received(self, data: bytes, datatype: asyncssh.DataType) -> None:
        if self.near.transport is not None:
            self.near.transport.write(data)

    def eof_received(self) -> bool:
        transport = self.near.transport
        if transport is not None and transport.can_write_eof():
            transport.write_eof()
            return True
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        if self.near.transport is not None:
            self.near.transport.close()

    def pause_writing(self) -> None:
        if self.near.transport is not None:
            self.near.transport.pause_reading()

    def resume_writing(self) -> None:
        if self.near.transport is not None:
            self.near.transport.resume_reading()


class _Near(asyncio.Protocol):
    """One local connection (a client's ZMQ socket) forwarded to ``path`` in main1."""

    def __init__(self, forwards: UnixForwards, path: str, lead: bool) -> None:
        self.forwards = forwards
        self.path = path
        self.lead = lead
        self.transport: asyncio.Transport | None = None
        self.channel: asyncssh.SSHUNIXChannel[bytes] | None = None
        self.held = bytearray()  # sent before the far end opened
        self.eof = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        self.forwards.opening(self)

    def data_received(self, data: bytes) -> None:
        if self.channel is not None:
            self.channel.write(data)
            return
        self.held += data
        if self.transport is not None:  # the rest waits in the socket until the far end opens
            self.transport.pause_reading()

    def eof_received(self) -> bool:
        if self.channel is not None:
            self.channel.write_eof()
        else:
            self.eof = True
        return True

    def connection_lost(self, exc: Exception | None) -> None:
        self.transport = None
        if self.channel is not None:
            self.channel.close()
        self.forwards.lost(self)

    def pause_writing(self) -> None:
        if self.channel is not None:
            self.channel.pause_reading()

    def resume_writing(self) -> None:
        if self.channel is not None:
            self.channel.resume_reading()

    def opened(self, channel: asyncssh.SSHUNIXChannel[bytes]) -> None:
        """The far socket is open: pass on what was held, then read freely."""
        self.channel = channel
        if self.held:
            channel.write(bytes(self.held))
            self.held.clear()
        if self.eof:
            channel.write_eof()
        if self.transport is not None:
            self.transport.resume_reading()


class UnixForwards:
    """Local sockets ``local[i]`` forwarded to ``remote[i]`` over ``conn`` (see the
    module docstring); ``lead``: the index whose connections open first, if any."""

    def __init__(self, conn: asyncssh.SSHClientConnection, lead: int | None = None) -> None:
        self.conn = conn
        self.lead = lead
        self._servers: list[asyncio.AbstractServer] = []
        self._tasks: dict[_Near, asyncio.Task[None]] = {}
        self._leads_pending = 0
        self._leads_settled = asyncio.Event()
        self._leads_settled.set()

    async def listen(self, local: Sequence[str], remote: Sequence[str]) -> None:
        """Listen on every local path (a stale socket file there is replaced)."""
        loop = asyncio.get_running_loop()
        for n, (near, far) in enumerate(zip(local, remote, strict=True)):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(near)
            server = await loop.create_unix_server(self._protocol(far, n == self.lead), near)
            self._servers.append(server)

    def _protocol(self, far: str, lead: bool) -> Callable[[], _Near]:
        return lambda: _Near(self, far, lead)

    def opening(self, near: _Near) -> None:
        """A local connection came: open its far end in the background."""
        if near.lead:
            self._leads_pending += 1
            self._leads_settled.clear()
        self._tasks[near] = asyncio.ensure_future(self._open(near))

    def lost(self, near: _Near) -> None:
        """A local connection ended: stop opening its far end."""
        task = self._tasks.pop(near, None)
        if task is not None and not task.done():
            task.cancel()

    async def _open(self, near: _Near) -> None:
        try:
            channel = await self._first_open(near)
        finally:
            if near.lead:
                self._leads_pending -= 1
                if not self._leads_pending:
                    self._leads_settled.set()
        if channel is None:
            if near.transport is not None:
                near.transport.close()
            return
        if near.transport is None:  # the client left meanwhile
            channel.close()
            return
        near.opened(channel)

    async def _first_open(self, near: _Near) -> asyncssh.SSHUNIXChannel[bytes] | None:
        """The channel to ``near.path`` once it exists (after any pending connection
        to the lead, checked before every try: a client's sockets connect in no
        set order); None if it did not appear within :data:`OPEN_PATIENCE`, or the
        SSH connection failed."""
        loop = asyncio.get_running_loop()
        began = loop.time()
        deadline = began + OPEN_PATIENCE
        while near.transport is not None:
            if not near.lead and self._leads_pending:
                await wait_set(self._leads_settled, LEAD_WAIT)
            try:
                channel, _ = await self.conn.create_unix_connection(lambda: _Far(near), near.path)
                return channel
            except asyncssh.ChannelOpenError as exc:
                # Refused by the server's rules: no use trying again. (OpenSSH says
                # "connect failed" for those too: they are then tried as if missing.)
                if exc.code != asyncssh.OPEN_CONNECT_FAILED:
                    return None
                if loop.time() >= deadline:  # else not listening there yet
                    return None
                fast = loop.time() - began < OPEN_FAST_FOR
                await asyncio.sleep(OPEN_RETRY if fast else OPEN_SLOW_RETRY)
            except (OSError, asyncssh.Error):
                return None
        return None

    async def close(self) -> None:
        """Stop listening and drop every forwarded connection."""
        for server in self._servers:
            server.close()
        for near, task in list(self._tasks.items()):
            task.cancel()
            if near.transport is not None:
                near.transport.close()
        tasks = list(self._tasks.values())
        self._tasks.clear()
        await asyncio.gather(*tasks, return_exceptions=True)
        for server in self._servers:
            await server.wait_closed()
        self._servers.clear()
