"""Containers leave their networks one at a time on Docker engines that freeze otherwise.

Docker 20.10 before 20.10.27 (Debian 12's ``docker.io`` is 20.10.24), and every
release before it, takes two of its network locks in opposite orders when a
container leaves a network (it reads the network's name records) and when the
deletion of another endpoint of that network is processed (moby/moby#42545). Two
containers of one network going away at the same moment can therefore freeze the
whole daemon: every later API call waits until ``dockerd`` is restarted. A
session's teardown removes its containers at once, and a container leaves its
networks as it exits, so on those engines :meth:`DockerAgent.remove_container
<jupyter_cluster.engine.agents.docker.DockerAgent.remove_container>` first
disconnects a running container from each of its networks, one container at a
time per network (:class:`NetworkLeaving`); the removals then go on at once, and a
container exiting with no endpoint takes neither lock. A container whose start is
still in Docker's hands (a launch cancelled meanwhile) is covered too: Docker holds
the container's lock through a start, and its inspect waits for that lock, so the
container is seen running and leaves first. Every engine process of one store takes
the same departures in turn (:mod:`.file_lock`), so two processes ending one session
at once do not leave its network together either.

Measured with 16 containers of one network removed at once on Docker 20.10.24
(``bench/bench_teardown.py``): 1.31 s this way against 1.20 s for Docker's own
concurrent removal, and 1.71 s removing them one after another. Engines with the
fix pay nothing but the version read, from the agent's info (``ServerVersion``) or
else one ``GET /version`` per connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import AsyncIterator
from typing import Any

from aiodocker.networks import DockerNetwork

from .... import file_lock
from ....errors import AgentError
from .connection import DockerConnection

#: The first 20.10 release with the fix (moby/libnetwork#2679); 22.06 and later had it.
FIXED_IN = (20, 10, 27)
#: Network modes a container has no endpoint of its own in.
_NO_ENDPOINTS = ("host", "none")


def deadlocks_on_leave(version: str) -> bool:
    """Whether a Docker engine reporting ``version`` (``GET /version``'s
    ``Version``, e.g. ``20.10.24+dfsg1``) can freeze when two containers leave
    one network at once. Versions it cannot read (a development build, another
    engine's numbering) are taken as fixed."""
    found = re.match(r"(\d+)\.(\d+)(?:\.(\d+))?", version.strip())
    if not found:
        return False
    major, minor, patch = (int(part or 0) for part in found.groups())
    # Docker's own numbering began at 17.03 (before it, 1.x); Podman's is 1 to 5.
    return major >= 17 and (major, minor, patch) < FIXED_IN


class NetworkLeaving:
    """One agent's container departures, one at a time per network (see the
    module docstring). Held by the DockerAgent; :meth:`leave_networks` is called
    before each removal."""

    def __init__(self, conn: DockerConnection, lock_dir: str = "", lock_wait: float = 30.0) -> None:
        """``lock_dir``: where the engine processes of one store take their turns
        (empty: within this process only); ``lock_wait``: the longest another
        process's turn is waited for (the agent's timeout)."""
        self.conn = conn
        self._needed: bool | None = None  # asked once per connection
        self.networks = KeyedLocks()
        self.lock_dir, self.lock_wait = lock_dir, lock_wait
        #: Networks whose file lock was not had in time: not waited for again, so a
        #: stuck holder costs a teardown one wait, not one per container.
        self.without_file_lock: set[str] = set()

    def observe(self, version: str) -> None:
        """Note the engine's version, as its info reports it (``ServerVersion``)."""
        self._needed = self.conn.may_freeze = deadlocks_on_leave(version)

    async def needed(self) -> bool:
        """Whether this agent's engine needs it (its version asked once, unless its
        info told it; an engine that does not answer is asked again next time)."""
        if self._needed is None:
            conn = self.conn
            data = await conn.call("reading its version", conn.client.version())
            self.observe(str(data.get("Version", "")))
        return bool(self._needed)

    async def leave_networks(self, container_id: str) -> None:
        """Disconnect a running ``container_id`` from each of its networks, one
        container at a time per network, if the engine needs it. Best effort: the
        removal that follows takes the container off its networks anyway."""
        with contextlib.suppress(AgentError):
            if not await self.needed():
                return
            for network_id in await self._networks(container_id):
                # This process's turns first (woken at once), then the other processes'.
                async with self.networks.hold(network_id), self._others_turns(network_id):
                    if self.conn.unavailable is not None:
                        return  # one wait for a frozen engine is enough: not one each
                    await self.conn.call(
                        f"disconnecting container {container_id[:12]} before its removal",
                        DockerNetwork(self.conn.client, network_id).disconnect(
                            {"Container": container_id, "Force": True}
                        ),
                        missing=None,
                        gone=(404, 409),
                    )

    @contextlib.asynccontextmanager
    async def _others_turns(self, network_id: str) -> AsyncIterator[None]:
        """The other engine processes' turns on ``network_id``; entered with this
        process's turn held, so that one wait for a stuck holder serves them all."""
        lock_dir = "" if network_id in self.without_file_lock else self.lock_dir
        async with file_lock.held(lock_dir, f"network-{network_id}", self.lock_wait) as had:
            if lock_dir and not had:
                self.without_file_lock.add(network_id)
            yield

    async def _networks(self, container_id: str) -> list[str]:
        """The ids of the networks a running container has an endpoint in."""
        conn = self.conn
        container = conn.client.containers.container(container_id)
        data: dict[str, Any] | None = await conn.call(
            f"inspecting container {container_id[:12]}", container.show(), missing=None
        )
        if not data or not (data.get("State") or {}).get("Running"):
            return []  # a container that does not run has no endpoint to leave
        mode = str((data.get("HostConfig") or {}).get("NetworkMode") or "")
        if mode in _NO_ENDPOINTS or mode.startswith("container:"):
            return []
        networks = (data.get("NetworkSettings") or {}).get("Networks") or {}
        return [str(n["NetworkID"]) for n in networks.values() if n.get("NetworkID")]


class KeyedLocks:
    """One lock per key, forgotten when nobody holds or waits for it: the networks
    a :class:`NetworkLeaving` has departures in flight on."""

    def __init__(self) -> None:
        self._locks: dict[str, asyncio.Lock] = {}
        self._users: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self._locks)

    @contextlib.asynccontextmanager
    async def hold(self, key: str) -> AsyncIterator[None]:
        """Hold ``key``'s lock, waiting for whoever holds it."""
        lock = self._locks.setdefault(key, asyncio.Lock())
        self._users[key] = self._users.get(key, 0) + 1
        try:
            async with lock:
                yield
        finally:
            self._users[key] -= 1
            if not self._users[key]:
                del self._users[key], self._locks[key]
