"""Which device nodes an agent has under a directory (its RDMA devices).

:meth:`DockerAgent.device_nodes` delegates here when a session of a resource group
with ``rdma`` is brought up (see :mod:`jupyter_cluster.core.fast_network`). The
engine may be on another machine, so it asks that engine: a throwaway container
of the session's image (already on the agent) gets the directory bind-mounted
read-only, with no network and no capability, lists the character devices in it
and is removed, whatever happens. A directory the agent lacks is no device (Docker
refuses the bind mount before anything is made). Answers are kept for a while per
directory, so a launch does not pay for the probe each time.
"""

from __future__ import annotations

import asyncio
import contextlib
import posixpath
import time
from typing import Any

from ....errors import AgentError
from .connection import DockerConnection

#: Seconds an agent's answer is kept (devices come and go with drivers, rarely).
CACHE_SECONDS = 300.0
_MOUNT = "/run/jupyter-cluster-probe"
# One level, as /dev/infiniband is; as root without capabilities (a listing needs none).
_SCRIPT = f'for f in {_MOUNT}/*; do if [ -c "$f" ]; then echo "$f"; fi; done'


class DeviceProbe:
    """The character device nodes of an agent, per directory, cached."""

    def __init__(self, conn: DockerConnection) -> None:
        self.conn = conn
        self._cache: dict[str, tuple[float, tuple[str, ...]]] = {}
        self._lock = asyncio.Lock()  # the containers of one launch share one probe

    async def nodes(self, directory: str, image: str, labels: dict[str, str]) -> tuple[str, ...]:
        """The character devices directly under ``directory`` on the agent (their
        paths there), none when it has no such directory; probed with ``image``."""
        directory = posixpath.normpath(directory)
        async with self._lock:
            cached = self._cache.get(directory)
            if cached is not None and time.monotonic() - cached[0] < CACHE_SECONDS:
                return cached[1]
            found = await self._probe(directory, image, labels)
            self._cache[directory] = (time.monotonic(), found)
            return found

    async def _probe(self, directory: str, image: str, labels: dict[str, str]) -> tuple[str, ...]:
        conn = self.conn
        body: dict[str, Any] = {
            "Image": image,
            "User": "0",
            "Entrypoint": ["/bin/sh", "-c"],
            "Cmd": [_SCRIPT],
            "Labels": labels,
            "NetworkDisabled": True,
            "HostConfig": {
                "NetworkMode": "none",
                "CapDrop": ["ALL"],
                "SecurityOpt": ["no-new-privileges"],
                "PidsLimit": 16,
                "Mounts": [
                    {"Type": "bind", "Source": directory, "Target": _MOUNT, "ReadOnly": True}
                ],
            },
        }
        action = f"looking for device nodes in {directory}"
        try:
            helper = await conn.call(action, conn.client.containers.create(body))
        except AgentError as exc:
            if "bind source path does not exist" in exc.message:
                return ()
            raise
        try:
            await conn.call(action, helper.start())
            result = await conn.call(action, helper.wait())
            output = "".join(await conn.call(action, helper.log(stdout=True, stderr=True)))
        finally:
            with contextlib.suppress(AgentError):
                await conn.call(action, helper.delete(force=True), missing=None, gone=(404, 409))
        if int(result.get("StatusCode", -1)) != 0:
            raise AgentError(
                f"agent {conn.config.id}: {action} failed: {output.strip()[:300]}",
                conn.config.id,
            )
        names = [line.strip().rsplit("/", 1)[-1] for line in output.splitlines() if line.strip()]
        return tuple(sorted(posixpath.join(directory, n) for n in names if n))


#: What runc says when the engine may not set a container's memlock limit (RLIMIT_MEMLOCK
#: is resource 8), and what to do about it.
MEMLOCK_REFUSED = "error setting rlimit type 8"
MEMLOCK_HELP = (
    "This agent's Docker engine may not lift the memlock limit of containers given RDMA "
    "devices (it lacks CAP_SYS_RESOURCE, as rootless or nested engines do): set the "
    "group's memlock in FastNetworking.resource_groups to at most the engine's own limit"
)


def explain_memlock(exc: AgentError, agent_id: str) -> AgentError:
    """``exc`` from starting a container, with what to configure added when the engine
    may not lift an RDMA container's memlock limit (else ``exc`` itself)."""
    if MEMLOCK_REFUSED not in exc.message:
        return exc
    return AgentError(f"{exc.message}. {MEMLOCK_HELP}", agent_id)
