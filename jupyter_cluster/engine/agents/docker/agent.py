"""The real agent: one Docker engine, reached with aiodocker.

The manager creates one :class:`DockerAgent` per configured agent. It is the only
place where the engine speaks the Docker API (``images/build.py`` builds the
default image on its own). Every call goes through the agent's
:class:`~.connection.DockerConnection`: bounded by timeouts, errors turned into
:class:`~jupyter_cluster.errors.AgentError` naming the agent, health recorded.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping, Sequence

from ....core.images import reference_problem
from ....errors import AgentError
from ..base import (
    AgentConfig,
    AgentInfo,
    ContainerSpec,
    ContainerState,
    FileEntry,
    OomEvent,
)
from . import images
from .archive import files_tar
from .beside import run_beside, run_helper
from .connection import DockerConnection
from .container_io import DockerContainerIO
from .devices import DeviceProbe, explain_memlock
from .events import follow_oom
from .gpus import GpuFinder
from .info import agent_info, unreachable_info
from .models import (
    container_config,
    container_state,
    label_filter,
    listed_state,
)
from .network_leave import NetworkLeaving
from .networks import DockerNetworks
from .volumes import DockerVolumes

#: Seconds ``info`` waits for the engine (it is the health probe: keep it short).
PROBE_TIMEOUT = 5.0


class DockerAgent(DockerContainerIO, DockerNetworks, DockerVolumes):
    """An agent backed by a Docker engine (local socket, or ``tcp://`` with TLS)."""

    def __init__(self, config: AgentConfig, lock_dir: str = "") -> None:
        """``lock_dir``: a directory the engine processes of one store share (beside
        the store), for the departures of :mod:`.network_leave`."""
        self.config = config
        self.connection = DockerConnection(config)
        self.gpu_finder = GpuFinder(self.connection, config)  # GPUs found once per connection
        self.device_probe = DeviceProbe(self.connection)
        self.leaving = NetworkLeaving(self.connection, lock_dir, config.timeout)

    @property
    def id(self) -> str:
        """The agent's id (from its configuration)."""
        return self.config.id

    async def info(self) -> AgentInfo:
        """Capacity and health; an engine that does not answer soon is unreachable."""
        conn = self.connection
        probe = self.config.connect_timeout + min(self.config.timeout, PROBE_TIMEOUT)
        try:
            data = await conn.call("reading its info", conn.client.system.info(), limit=probe)
        except AgentError as exc:
            self.gpu_finder.forget()  # found again when the agent is back
            return unreachable_info(self.config, exc.message)
        self.leaving.observe(str(data.get("ServerVersion", "")))
        gpus = await self.gpu_finder.report(data)  # pinned, cached, or probed (bounded)
        return agent_info(self.config, data, gpus)

    async def has_image(self, image: str) -> bool:
        """Whether the engine has ``image``; a name that is no image reference is an
        AgentError, as Docker says it (``a//b`` would reach Docker as a redirect, and
        read as an engine that cannot be reached)."""
        conn = self.connection
        problem = reference_problem(image)
        if problem:
            raise AgentError(
                f"agent {self.id}: looking up image {image} failed: invalid reference "
                f"format: {problem}",
                self.id,
            )
        found = await conn.call(
            f"looking up image {image}", conn.client.images.inspect(image), missing=None
        )
        return found is not None

    async def pull_image(
        self,
        image: str,
        auth: Mapping[str, str] | None = None,
        on_message: images.PullCallback | None = None,
    ) -> None:
        """Pull ``image`` from its registry (see :func:`.images.pull`)."""
        await images.pull(self.connection, image, auth, on_message)

    def save_image(self, image: str) -> AsyncIterator[bytes]:
        """``image`` as a ``docker save`` tar stream."""
        return images.save(self.connection, image)

    async def load_image(self, image: str, pieces: AsyncIterator[bytes]) -> None:
        """Load a ``docker save`` stream of ``image`` (named for messages)."""
        await images.load(self.connection, image, pieces)

    async def device_nodes(
        self, directory: str, image: str, labels: Mapping[str, str]
    ) -> tuple[str, ...]:
        """The character devices directly under ``directory`` on this agent (e.g. its
        RDMA devices), probed with ``image`` and kept a while (see :mod:`.devices`)."""
        return await self.device_probe.nodes(directory, image, dict(labels))

    async def create_container(self, spec: ContainerSpec) -> str:
        """Create (not start) the container of ``spec``; a data folder that the
        agent does not have is a clear error, not an empty directory."""
        conn = self.connection
        body = container_config(spec, self.config.address)
        try:
            request = conn.client.containers.create(body, name=spec.name)
            container = await conn.call(f"creating container {spec.name}", request)
        except AgentError as exc:
            if "bind source path does not exist" not in exc.message:
                raise
            missing = [m.source for m in spec.mounts if m.source in exc.message] or ["?"]
            raise AgentError(
                f"agent {self.id}: the data folder {missing[0]} does not exist on this agent; "
                "make the shared data-folder root available there (its data_root is "
                f"{self.config.data_root}) or launch without that folder",
                self.id,
            ) from exc
        return str(container.id)

    async def put_files(self, container_id: str, files: Sequence[FileEntry]) -> None:
        """Copy ``files`` (with owner and mode) into a created container."""
        conn = self.connection
        container = conn.client.containers.container(container_id)
        await conn.call(
            "copying start-up files into the container",
            container.put_archive("/", files_tar(files)),
        )

    async def start_container(self, container_id: str) -> None:
        """Start a created container; an engine that may not lift an RDMA container's
        memlock limit says what to configure instead."""
        conn = self.connection
        container = conn.client.containers.container(container_id)
        try:
            await conn.call(f"starting container {container_id[:12]}", container.start())
        except AgentError as exc:
            raise explain_memlock(exc, self.id) from exc

    async def inspect_container(self, container_id: str) -> ContainerState | None:
        """The container's state, or None when it no longer exists."""
        conn = self.connection
        container = await conn.call(
            f"inspecting container {container_id[:12]}",
            conn.client.containers.get(container_id),
            missing=None,
        )
        return None if container is None else container_state(container._container)

    async def remove_container(self, container_id: str) -> None:
        """Kill and remove a container; gone (404) or being removed (409) is fine.
        On an engine that can freeze when two containers of one network exit
        together, the container first leaves its networks (see .network_leave)."""
        await self.leaving.leave_networks(container_id)
        conn = self.connection
        container = conn.client.containers.container(container_id)
        await conn.call(
            f"removing container {container_id[:12]}",
            container.delete(force=True, v=True),
            missing=None,
            gone=(404, 409),
        )

    async def list_containers(
        self, labels: Mapping[str, str], *, detail: bool = True
    ) -> list[ContainerState]:
        """Containers (running or not) carrying all of ``labels``; with ``detail``,
        each inspected (see the protocol)."""
        conn = self.connection
        found = await conn.call(
            "listing containers",
            conn.client.containers.list(all=True, filters=label_filter(labels)),
        )
        if not detail:
            return [listed_state(c._container) for c in found]
        states = await asyncio.gather(*(self.inspect_container(c.id) for c in found))
        return [state for state in states if state is not None]

    def oom_events(
        self, labels: Mapping[str, str], *, since: float | None = None
    ) -> AsyncIterator[OomEvent]:
        """Follow the OOM kills in containers with all of ``labels`` (see .events)."""
        return follow_oom(self.connection, labels, since)

    async def run_beside(
        self,
        container_id: str,
        image: str,
        script: str,
        capabilities: Sequence[str],
        labels: Mapping[str, str],
    ) -> tuple[int, str]:
        """Run ``script`` as root in a throwaway container in ``container_id``'s
        network namespace (see :mod:`.beside`); (exit code, output)."""
        return await run_beside(self.connection, container_id, image, script, capabilities, labels)

    async def run_on_host(
        self, image: str, script: str, capabilities: Sequence[str], labels: Mapping[str, str]
    ) -> tuple[int, str]:
        """Run ``script`` as root in a throwaway container in the host's network
        namespace (see :mod:`.beside`); (exit code, output)."""
        action = "running a helper in the host's network namespace"
        return await run_helper(
            self.connection, "host", image, script, capabilities, labels, action
        )

    async def close(self) -> None:
        """Close the connections to the engine."""
        await self.connection.close()
