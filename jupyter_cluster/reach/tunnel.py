"""Kernel traffic over SSH: forward main1's kernel sockets through its SSH server (asyncssh).

For an agent whose ``kernel_transport`` is ``ssh`` (the default), main1 publishes
only its SSH port; the kernel provisioner opens a :class:`KernelTunnel` to it with
the session's user key, checking main1's host key strictly (the one the manager made
for it), and forwards Unix sockets in a private (0700) directory of this machine to
the kernel's Unix sockets inside main1; the kernel manager uses ZMQ's ``ipc``
transport on them. Everything between this machine and the agent is then encrypted
and authenticated by SSH, so nobody on the network can read IOPub or send to the
shell channel, and no other user of this machine or of the agent's host can either:
a loopback TCP port would be open to every local user (IOPub needs no key to read).

A client may connect before the kernel has bound its sockets (it starts while
main1 comes up): its connections are held until they exist, IOPub's first
(:mod:`.unix_forward`). If the SSH connection drops (the agent froze, the network
went away), the tunnel reconnects in the background to the same sockets, so
kernel clients resume when main1 answers again.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Awaitable, Callable, Mapping, Sequence

from ..asyncwait import stopped, within
from ..core.naming import WORK_USER
from ..errors import AgentError
from ..private_dirs import PrivateDir
from ..sshlib import asyncssh
from .unix_forward import UnixForwards

log = logging.getLogger(__name__)
#: Seconds between reconnection attempts after the SSH connection dropped.
RECONNECT_INTERVAL = 1.0


async def no_delay(conn: asyncssh.SSHClientConnection) -> None:
    """Make main1's sshd send small packets at once on this connection (the kernel
    tunnel's and the app proxy's, :mod:`.apps`).

    OpenSSH's sshd turns Nagle's algorithm off (TCP_NODELAY) on a connection only
    once a session on it runs a command; on a connection that only forwards ports it
    stays on, and a kernel's small replies then wait up to 40 ms each for the ACK of
    the packet before them (delayed ACKs). One short command fixes that for the
    connection's life; if it fails the tunnel still works, only slower.
    """
    with contextlib.suppress(asyncssh.Error, OSError, asyncio.TimeoutError):
        await within(conn.run("true", check=False), 10)


class KernelTunnel:
    """Unix sockets ``{prefix}-1`` … ``{prefix}-N`` forwarded to Unix sockets inside
    main1 over one SSH connection (``prefix`` is in a directory only this user can
    enter)."""

    def __init__(
        self,
        address: str,
        port: int,
        keys: Mapping[str, str],
        directory: PrivateDir,
        prefix: str,
        *,
        connect_timeout: float = 10.0,
    ) -> None:
        """``prefix`` names the local sockets, in ``directory`` (held: the tunnel
        stops holding it when closed)."""
        self.address, self.port = address, port
        self._user_key = asyncssh.import_private_key(keys["user"])
        self._host_key = asyncssh.import_public_key(keys["host:main1.pub"])
        self._directory = directory
        self.prefix = prefix
        self.connect_timeout = connect_timeout
        self._conn: asyncssh.SSHClientConnection | None = None
        self._watch: asyncio.Task[None] | None = None
        self._closed = False
        self._count = 0  # ports forwarded
        self._lead: int | None = None
        self._forwards: UnixForwards | None = None

    async def _connect(self) -> asyncssh.SSHClientConnection:
        """Connect to main1's sshd, retrying while it is still starting (refused)."""
        deadline = asyncio.get_running_loop().time() + self.connect_timeout
        while True:
            try:
                return await within(
                    asyncssh.connect(
                        self.address,
                        self.port,
                        username=WORK_USER,
                        client_keys=[self._user_key],
                        known_hosts=([self._host_key], [], []),  # main1's own key only
                        agent_path=None,
                        config=[],
                        keepalive_interval=15,
                    ),
                    max(deadline - asyncio.get_running_loop().time(), 0.1),
                )
            except (OSError, asyncssh.Error, asyncio.TimeoutError) as exc:
                # Not listening yet: refused, or (through docker-proxy, which accepts
                # on the published port and then finds nothing behind it) dropped.
                refused = isinstance(
                    exc, (ConnectionRefusedError, ConnectionResetError, asyncssh.ConnectionLost)
                ) or (isinstance(exc, asyncssh.Error) and "closed" in str(exc).lower())
                if refused and asyncio.get_running_loop().time() < deadline:
                    await asyncio.sleep(0.1)  # sshd in main1 is not listening yet
                    continue
                raise AgentError(
                    f"cannot open the SSH tunnel to main1 at {self.address}:{self.port} "
                    f"({exc or type(exc).__name__}); is the agent reachable from this machine?"
                ) from exc

    def path(self, n: int) -> str:
        """The socket of the ``n``-th forwarded port (ZMQ's ``ipc`` naming)."""
        return f"{self.prefix}-{n}"

    async def _forward(self, conn: asyncssh.SSHClientConnection, remote: Sequence[str]) -> None:
        await no_delay(conn)
        if self._forwards is not None:  # those of a dropped connection
            await self._forwards.close()
        self._forwards = UnixForwards(conn, self._lead)
        local = [self.path(n) for n in range(1, len(remote) + 1)]
        await self._forwards.listen(local, remote)

    async def open(self, remote_paths: Sequence[str], lead: int | None = None) -> list[int]:
        """Connect and forward to ``remote_paths`` (Unix sockets in main1); the
        ``ipc`` port number of each. Connections to ``remote_paths[lead]`` (the
        kernel's IOPub) open before the others (see :mod:`.unix_forward`)."""
        remote_ports = list(remote_paths)
        self._count = len(remote_ports)
        self._lead = lead
        self._conn = await self._connect()
        try:
            await self._forward(self._conn, remote_ports)
        except (OSError, asyncssh.Error) as exc:
            self._conn.close()
            raise AgentError(f"cannot forward the kernel's ports over SSH: {exc}") from exc
        self._watch = asyncio.ensure_future(self._keep_open(list(remote_ports)))
        return list(range(1, len(remote_ports) + 1))

    async def _keep_open(self, remote_ports: list[str]) -> None:
        """Reconnect to the same local ports whenever the connection drops."""
        while not self._closed:
            assert self._conn is not None
            await self._conn.wait_closed()
            if self._closed:
                return
            log.warning(
                "SSH tunnel to main1 at %s:%s dropped; reconnecting", self.address, self.port
            )
            while not self._closed:
                await asyncio.sleep(RECONNECT_INTERVAL)
                try:
                    conn = await self._connect()
                except AgentError as exc:
                    log.debug("SSH tunnel reconnection failed: %s", exc)
                    continue
                try:
                    await self._forward(conn, remote_ports)
                except (OSError, asyncssh.Error) as exc:
                    log.debug("SSH tunnel reconnection failed: %s", exc)
                    conn.close()
                    continue
                self._conn = conn
                log.info("SSH tunnel to main1 at %s:%s is back", self.address, self.port)
                break

    @property
    def directory(self) -> str:
        """The private directory the forwarded sockets are in."""
        return self._directory.path

    def let_go(self) -> None:
        """Stop holding the sockets' directory, which another tunnel took up (see
        :meth:`TunnelSlot.replace`); for a tunnel already closed with ``keep_directory``."""
        self._directory.release()

    async def close(self, *, keep_directory: bool = False) -> None:
        """Stop forwarding, close the connection and remove the sockets; then their
        private directory too, unless ``keep_directory``: the kernel's clients still
        connect to paths in it until a tunnel forwards them again (see
        :meth:`TunnelSlot.replace`), and its name must not be free for another user meanwhile.
        A second call finishes what the first left."""
        self._closed = True
        try:
            if self._watch is not None:
                await stopped(self._watch)
        finally:
            await self._release(keep_directory)

    async def _release(self, keep_directory: bool) -> None:
        """Close the connection and remove the forwarded sockets (``close``'s end, run
        even when the caller is cancelled while the watcher stops)."""
        if self._forwards is not None:
            await self._forwards.close()
            self._forwards = None
        if self._conn is not None:
            self._conn.close()
            with contextlib.suppress(Exception):
                await self._conn.wait_closed()
            self._conn = None
        for n in range(1, self._count + 1):
            with contextlib.suppress(OSError):
                os.unlink(self.path(n))
        if not keep_directory:
            self._directory.remove()


class TunnelSlot:
    """The kernel tunnel of one route (:class:`~.agent.AgentRoute`,
    :class:`~.ssh.SshRoute`): replaced at each (re)connection, closed without its
    directory when the kernel dies, closed for good with the route."""

    def __init__(self) -> None:
        self.tunnel: KernelTunnel | None = None

    async def replace(self, opening: Callable[[], Awaitable[KernelTunnel | None]]) -> None:
        """Put the tunnel ``opening`` makes in place of the current one (a restart, a
        re-attach, a route opened again). The old one's sockets go first; its private
        directory only once the new tunnel does not forward in it (a kernel's restart
        reuses it): removed and made again, its name would be free for a moment, for
        another user to take while the kernel's clients still connect to paths in it."""
        old, self.tunnel = self.tunnel, None
        if old is not None:
            await old.close(keep_directory=True)
        new = None
        try:
            new = self.tunnel = await opening()
        finally:
            if old is not None:
                if new is not None and new.directory == old.directory:
                    old.let_go()
                else:
                    await old.close()

    async def close_sockets(self) -> None:
        """Stop forwarding (the kernel died), keeping the sockets' private directory
        for the restart's tunnel: its clients still connect to paths in it."""
        if self.tunnel is not None:
            await self.tunnel.close(keep_directory=True)

    async def close(self) -> None:
        """Close the tunnel and remove its directory, if one is open."""
        if self.tunnel is not None:
            await self.tunnel.close()
            self.tunnel = None
