"""The Agent protocol: everything the manager asks of a Docker host.

The manager talks to agents only through this interface, so the pure core and the
manager's unit tests can use :mod:`.fake`, while :mod:`.docker` (a package) is the real edge
(aiodocker, one client per agent). Every method raises
:class:`~jupyter_cluster.errors.AgentError` (never a library exception).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from typing import Any, Protocol

from .agent_config import AgentConfig as AgentConfig  # re-exported: its old home
from .agent_config import AgentInfo as AgentInfo
from .agent_config import TLSFiles as TLSFiles
from .container_types import DEFAULT_BRIDGE as DEFAULT_BRIDGE  # re-exported: their old home
from .container_types import KEPT_CAPABILITIES as KEPT_CAPABILITIES
from .container_types import BindMount as BindMount
from .container_types import ContainerSpec as ContainerSpec
from .container_types import ContainerState as ContainerState
from .container_types import FileEntry as FileEntry
from .container_types import Limits as Limits
from .container_types import NetworkState as NetworkState
from .container_types import OomEvent as OomEvent
from .container_types import not_running_reason as not_running_reason

#: Called with (stream, data) as an exec'd command writes: stream 1 is stdout, 2 stderr.
OutputCallback = Callable[[int, bytes], Awaitable[None] | None]


class Executor(Protocol):
    """What runs commands in a container: an agent (Docker exec), or in team mode an
    :class:`~jupyter_cluster.client.shell.SshRunner` (SSH as work). The kernel's
    process handle (``provisioning/process.py``) and the cgroup CPU read
    (``docker/cpu_counter.py``) need no more of either."""

    async def exec(
        self,
        container_id: str,
        cmd: Sequence[str],
        *,
        user: str = ...,
        workdir: str = ...,
        env: Mapping[str, str] | None = None,
        on_output: OutputCallback | None = None,
    ) -> int: ...


class Agent(Protocol):
    """A Docker host the manager can place containers on."""

    config: AgentConfig

    @property
    def id(self) -> str: ...

    async def info(self) -> AgentInfo:
        """Capacity (configured, else reported by the engine) and reachability."""
        ...

    async def has_image(self, image: str) -> bool: ...

    async def pull_image(
        self,
        image: str,
        auth: Mapping[str, str] | None = None,
        on_message: Callable[[Mapping[str, Any]], Awaitable[None] | None] | None = None,
    ) -> None:
        """Pull ``image`` from its registry with ``auth`` (username, password,
        serveraddress), passing Docker's progress messages to ``on_message``; an
        AgentError carries the registry's answer."""
        ...

    def save_image(self, image: str) -> AsyncIterator[bytes]:
        """``image`` as the tar stream ``docker save`` writes."""
        ...

    async def load_image(self, image: str, pieces: AsyncIterator[bytes]) -> None:
        """Load a ``docker save`` stream (of ``image``, named in errors)."""
        ...

    async def create_network(
        self,
        name: str,
        labels: Mapping[str, str],
        *,
        overlay: bool,
        encrypted: bool = False,
        mtu: int = 0,
        bridge_name: str = "",
    ) -> str:
        """A bridge network, or an attachable overlay (encrypted if asked), its
        interfaces' MTU ``mtu`` (0: Docker's default), a bridge's Linux interface
        named ``bridge_name`` if given (else Docker's ``br-…``); its id."""
        ...

    async def device_nodes(
        self, directory: str, image: str, labels: Mapping[str, str]
    ) -> tuple[str, ...]:
        """The character devices directly under ``directory`` on the agent (paths
        there; none without such a directory), looked at with ``image`` in a helper
        carrying ``labels``. A launch in a group with RDMA asks for its devices."""
        ...

    async def remove_network(self, name_or_id: str) -> None:
        """Remove a network; a missing one is not an error."""
        ...

    async def create_volume(self, name: str, labels: Mapping[str, str]) -> None:
        """Create a named volume (a session's start-up files, see
        :mod:`~jupyter_cluster.engine.launch.shared_files`)."""
        ...

    async def remove_volume(self, name: str) -> None:
        """Remove a named volume; a missing one is not an error."""
        ...

    async def create_container(self, spec: ContainerSpec) -> str:
        """Create (not start) a container; returns its id."""
        ...

    async def put_files(self, container_id: str, files: Sequence[FileEntry]) -> None:
        """Copy files (with owner and mode) into a created container."""
        ...

    async def move_to_network(
        self, container_id: str, network: str, aliases: Sequence[str]
    ) -> None:
        """Move a created, not yet started container from Docker's default bridge
        (:data:`DEFAULT_BRIDGE`, where it was created) to ``network``, known there by
        ``aliases``: a launch creates main1 while its network is being made."""
        ...

    async def start_container(self, container_id: str) -> None: ...

    async def inspect_container(self, container_id: str) -> ContainerState | None:
        """The container's state, or None when it no longer exists."""
        ...

    async def remove_container(self, container_id: str) -> None:
        """Kill and remove a container; a missing one is not an error."""
        ...

    def logs(
        self,
        container_id: str,
        *,
        tail: int | None = None,
        follow: bool = False,
        for_user: bool = False,
    ) -> AsyncIterator[str]:
        """The container's stdout/stderr as text lines (with their newline).

        ``for_user``: a user's read (REST, CLI, notebook), served from connections
        kept apart from the engine's own (so users' streams never starve a launch).
        """
        ...

    async def exec(
        self,
        container_id: str,
        cmd: Sequence[str],
        *,
        user: str = "work",
        workdir: str = "/home/work",
        env: Mapping[str, str] | None = None,
        on_output: OutputCallback | None = None,
    ) -> int:
        """Run ``cmd`` in the container, stream its output, return its exit code."""
        ...

    async def stats(self, container_id: str) -> Mapping[str, Any]:
        """One sample of Docker's stats of the container (``GET …/stats?stream=false``:
        CPU over about a second, memory, network, block IO); read by core.stats."""
        ...

    async def cpu_seconds(self, container_id: str) -> float:
        """CPU seconds the running container's processes have used so far (Docker's
        cumulative counter, one read with no second sample); read just before a
        session's containers are removed (:mod:`jupyter_cluster.engine.cpu_time`)."""
        ...

    def oom_events(
        self, labels: Mapping[str, str], *, since: float | None = None
    ) -> AsyncIterator[OomEvent]:
        """Follow the out-of-memory kills in containers carrying all of ``labels``
        (also those since ``since``, seconds since the epoch, that the engine still
        remembers); ends when the engine closes the stream. The OOM watch uses it."""
        ...

    async def run_beside(
        self,
        container_id: str,
        image: str,
        script: str,
        capabilities: Sequence[str],
        labels: Mapping[str, str],
    ) -> tuple[int, str]:
        """Run ``script`` (sh, as root) in a throwaway container of ``image`` that shares
        the network namespace of ``container_id`` and holds only ``capabilities``;
        its exit code and output. The egress rules use it."""
        ...

    async def run_on_host(
        self, image: str, script: str, capabilities: Sequence[str], labels: Mapping[str, str]
    ) -> tuple[int, str]:
        """Run ``script`` (sh, as root) in a throwaway container of ``image`` in the
        agent host's network namespace, holding only ``capabilities``; its exit code
        and output. The egress rules' host chain uses it."""
        ...

    async def list_containers(
        self, labels: Mapping[str, str], *, detail: bool = True
    ) -> list[ContainerState]:
        """Containers (running or not) carrying all of ``labels``. ``detail=False``:
        only their id, name, labels, ``running`` and ``status`` are known (one listing,
        no inspection each; enough for clean-up sweeps)."""
        ...

    async def list_networks(self, labels: Mapping[str, str]) -> list[NetworkState]: ...

    async def close(self) -> None: ...
