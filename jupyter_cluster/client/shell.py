"""Commands in a session's containers over SSH, as its owner (team mode).

A user's server holds no Docker credential, so whatever it runs in a container
(``exec``, the kernel process of the provisioner) goes over SSH as ``work``:
to main1 on the port it publishes on its agent, and to a sub through main1, as
the containers reach each other. The session's user key and the containers'
host keys come from the service (``GET sessions/{id}/access``, owner only); host
keys are checked strictly. Used by :class:`~jupyter_cluster.client.remote_engine.RemoteEngine`
and the provisioner (:class:`SshRunner` stands in for an agent's ``exec``).
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import shlex
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from ..asyncwait import within
from ..core.access import Access
from ..core.naming import SSH_PORT, WORK_USER
from ..errors import AgentError
from ..sshlib import asyncssh

#: Called with (1 or 2, data) per chunk of output; may return an awaitable (as an
#: agent's exec callback may).
OutputCallback = Callable[[int, bytes], Awaitable[None] | None]


#: Reads ``export`` lines from stdin, then runs "$@": the environment of a command run
#: over SSH never shows on a command line (every host user can read those in /proc).
_ENV_FROM_STDIN = 'eval "$(cat)" && exec "$@"'


def command_line(argv: Sequence[str], env: Mapping[str, str] | None = None) -> str:
    """``argv`` as one shell command line for sshd; with ``env``, one that first reads
    the variables from stdin (see :func:`env_script`)."""
    prefix = ["/bin/sh", "-c", _ENV_FROM_STDIN, "jupyter-cluster-env"] if env else []
    return shlex.join([*prefix, *argv])


def env_script(env: Mapping[str, str]) -> bytes:
    """What :func:`command_line` with ``env`` expects on stdin."""
    return "".join(f"export {k}={shlex.quote(v)}\n" for k, v in env.items()).encode()


async def _connect(
    access: Access, host: str, port: int, tunnel: Any = None, timeout: float = 30.0
) -> asyncssh.SSHClientConnection:
    key = access.keys.get(f"host:{host}.pub")
    if not key or "user" not in access.keys:
        raise AgentError(f"no key material for {host}; is the session running?")
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        try:
            return await within(
                asyncssh.connect(
                    host if tunnel is not None else access.address,
                    port,
                    tunnel=tunnel,
                    username=WORK_USER,
                    client_keys=[asyncssh.import_private_key(access.keys["user"])],
                    known_hosts=([asyncssh.import_public_key(key)], [], []),
                    agent_path=None,
                    config=[],
                    keepalive_interval=15,
                ),
                max(deadline - asyncio.get_running_loop().time(), 0.1),
            )
        except (OSError, asyncssh.Error, asyncio.TimeoutError) as exc:
            if asyncio.get_running_loop().time() < deadline and not isinstance(
                exc, asyncssh.PermissionDenied | asyncssh.HostKeyNotVerifiable
            ):
                await asyncio.sleep(0.2)  # sshd is still starting
                continue
            raise AgentError(f"cannot reach {host} over SSH ({exc or type(exc).__name__})") from exc


class ContainerShell:
    """SSH connections to a session's containers (main1 direct, subs through it)."""

    def __init__(self, access: Access) -> None:
        self.access = access
        self._conns: dict[str, asyncssh.SSHClientConnection] = {}
        self._lock = asyncio.Lock()

    async def connection(self, host: str) -> asyncssh.SSHClientConnection:
        """An open connection to ``host`` (made on first use)."""
        async with self._lock:
            conn = self._conns.get(host)
            if conn is not None and not conn.is_closed():
                return conn
            if host == "main1":
                conn = await _connect(self.access, "main1", self.access.port)
            else:
                main = self._conns.get("main1")
                if main is None or main.is_closed():
                    main = await _connect(self.access, "main1", self.access.port)
                    self._conns["main1"] = main
                conn = await _connect(self.access, host, SSH_PORT, tunnel=main)
            self._conns[host] = conn
            return conn

    async def run(
        self,
        host: str,
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        on_output: OutputCallback | None = None,
    ) -> int:
        """Run ``argv`` as work in ``host``; stream its output; its exit code."""
        conn = await self.connection(host)
        try:
            process = await conn.create_process(command_line(argv, env), encoding=None)
            if env:
                process.stdin.write(env_script(env))
                process.stdin.write_eof()
        except (OSError, asyncssh.Error) as exc:
            raise AgentError(f"cannot run a command in {host} ({exc})") from exc

        async def pump(stream: Any, fd: int) -> None:
            while data := await stream.read(65536):
                if on_output is not None and inspect.isawaitable(done := on_output(fd, data)):
                    await done

        try:
            await asyncio.gather(pump(process.stdout, 1), pump(process.stderr, 2))
            result = await process.wait()
        except asyncio.CancelledError:
            process.close()
            raise
        except (OSError, asyncssh.Error) as exc:
            raise AgentError(f"the SSH connection to {host} broke ({exc})") from exc
        return result.exit_status if result.exit_status is not None else 255

    async def close(self) -> None:
        """Close every connection (subs first: they ride main1's)."""
        for host in sorted(self._conns, key=lambda h: h == "main1"):
            conn = self._conns.pop(host)
            conn.close()
            with contextlib.suppress(Exception):
                await conn.wait_closed()


class SshRunner:
    """An agent's ``exec`` for one container, done over SSH (the kernel process uses it)."""

    def __init__(self, shell: ContainerShell, host: str = "main1") -> None:
        self.shell = shell
        self.host = host

    async def exec(
        self,
        container_id: str,
        cmd: Sequence[str],
        *,
        user: str = WORK_USER,
        workdir: str = "",
        env: Mapping[str, str] | None = None,
        on_output: OutputCallback | None = None,
    ) -> int:
        """Run ``cmd`` in the container as work (``container_id`` and ``user`` are
        implied by the connection: SSH logs in as work)."""
        return await self.shell.run(self.host, cmd, env=env, on_output=on_output)
