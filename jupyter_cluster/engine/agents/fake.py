"""An in-memory agent for unit tests of the manager (no Docker).

:class:`FakeAgent` implements the :class:`~.base.Agent` protocol with dicts (its
containers' records are :mod:`.fake_container`'s, what happens inside them
:mod:`.fake_io`'s, its images :mod:`.fake_images`', its networks
:mod:`.fake_networks`', its volumes :mod:`.fake_volumes`'):
containers and networks carry their labels, ``put_files`` and ``exec`` are
recorded, and tests steer it directly: ``fail_on`` injects errors, ``emit``
appends log lines, ``exit`` marks a container as exited, ``oom`` reports an
out-of-memory kill in one, ``reachable = False`` makes it look down. Nothing here
is used outside tests. What it reports is held to what the Docker agent reports by
``tests/integration/test_agent_contract.py``: change both together.
"""

from __future__ import annotations

import asyncio
import itertools
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from ...core.images import is_reference
from ...core.naming import DEFAULT_IMAGE, READY_MARKER
from ...core.resources import Resources
from ...errors import AgentError
from .base import (
    DEFAULT_BRIDGE,
    AgentConfig,
    AgentInfo,
    ContainerSpec,
    ContainerState,
    FileEntry,
    NetworkState,
    OomEvent,
)
from .fake_container import (
    ExecCall,
    ExecHandler,
    FakeContainer,
    has_labels,
)
from .fake_images import FakeImages
from .fake_io import FakeContainerIO
from .fake_networks import FakeNetworks
from .fake_volumes import FakeVolumes

#: What tests import from here (the container records live in .fake_container).
__all__ = ["DEFAULT_IMAGE", "ExecCall", "ExecHandler", "FakeAgent", "FakeContainer"]


class FakeAgent(FakeContainerIO, FakeImages, FakeNetworks, FakeVolumes):
    """An :class:`~.base.Agent` kept in memory; every attribute is open to tests.

    ``fail_on`` maps a key to the exception to raise: a method name (``"start_container"``),
    a container hostname (``"sub1"``: its create_container fails) or
    ``"<method>:<hostname>"`` (``"start_container:sub1"``). Entries stay until removed.
    """

    _ports = itertools.count(40000)

    def __init__(
        self,
        agent_id: str = "fake",
        *,
        resource_group: str = "default",
        cpu: float = 4.0,
        mem: int = 8 * 1024**3,
        gpus: Sequence[str] = (),
        images: Sequence[str] = (DEFAULT_IMAGE,),
        address: str = "127.0.0.1",
        ready_on_start: bool = False,
    ) -> None:
        self.ready_on_start = ready_on_start  # containers log the ready marker at start
        self.swarm = "fake-swarm"  # every fake agent is a node of one Swarm,
        self.swarm_worker = False  # a manager unless a test makes it a worker
        self.config = AgentConfig(
            # A URL of its own: what the engine remembers per agent host (the guard of
            # session bridges) is not carried from one fake to the next.
            agent_id,
            f"fake://{agent_id}/{uuid.uuid4().hex[:8]}",
            resource_group,
            address,
            cpu,
            mem,
            tuple(gpus),
        )
        self.images = set(images)
        self.registry = set()
        self.pulls = []
        self.containers: dict[str, FakeContainer] = {}
        self.networks: dict[str, NetworkState] = {}
        self.volumes = {}
        self.mtus: dict[str, int] = {}  # per network name: the MTU asked (0: default)
        self.bridges: dict[str, str] = {}  # per network name: the bridge name asked
        self.stale_endpoints: set[str] = set()  # networks Docker would refuse, empty
        self.host_scripts: list[str] = []  # scripts run by run_on_host
        self.device_paths: list[str] = []  # the agent's device nodes (see device_nodes)
        self.fail_on: dict[str, Exception] = {}
        self.calls: list[tuple[str, str]] = []  # (method, container/network name or id)
        self.execs: list[ExecCall] = []
        self.exec_handler: ExecHandler | None = None
        self.reachable = True
        self.closed = False
        self.ooms: list[OomEvent] = []  # every OOM kill reported, oldest first
        self._oom_wake = asyncio.Event()
        self._streams_ended = 0  # end_streams() calls so far

    @property
    def id(self) -> str:
        """The agent id from its config."""
        return self.config.id

    @property
    def _name(self) -> str:
        return self.config.id

    async def info(self) -> AgentInfo:
        """Configured capacity; ``reachable`` as the test set it (an unreachable
        agent, like Docker's, reports no capacity and no Swarm)."""
        cfg = self.config
        if not self.reachable:
            return AgentInfo(
                id=self.id,
                resource_group=cfg.resource_group,
                capacity=Resources(0, 0, 0, 0),
                gpu_ids=cfg.gpus,
                reachable=False,
                message=f"agent {self.id} is down (fake)",
            )
        return AgentInfo(
            id=self.id,
            resource_group=cfg.resource_group,
            capacity=Resources(cpu=cfg.cpu or 0.0, mem=cfg.mem or 0, shm=0, gpu=len(cfg.gpus)),
            gpu_ids=cfg.gpus,
            reachable=True,
            swarm="" if self.swarm_worker else self.swarm,  # only managers know it
            # Fake managers all answer as the one manager node their workers report.
            swarm_node=self._swarm_node(),
            swarm_manager=bool(self.swarm) and not self.swarm_worker,
            swarm_managers=(f"{self.swarm}/managers",) if self.swarm else (),
        )

    def _swarm_node(self) -> str:
        if not self.swarm:
            return ""
        return f"{self.swarm}/{self.id}" if self.swarm_worker else f"{self.swarm}/managers"

    async def has_image(self, image: str) -> bool:
        """Whether ``image`` (or ``image:latest``) is in ``images``; a name that is no
        image reference (e.g. upper case) is an AgentError, as in Docker."""
        self._enter("has_image", image)
        if not is_reference(image):
            raise AgentError(
                f"agent {self.id}: looking up image {image} failed: invalid reference format",
                self.id,
            )
        return self._has_image(image)

    async def device_nodes(
        self, directory: str, image: str, labels: Mapping[str, str]
    ) -> tuple[str, ...]:
        """Those of ``device_paths`` directly under ``directory``."""
        self._enter("device_nodes", directory)
        root = directory.rstrip("/")
        return tuple(sorted(p for p in self.device_paths if p.rpartition("/")[0] == root))

    async def create_container(self, spec: ContainerSpec) -> str:
        """Record a created container; unknown image or a used name is an AgentError."""
        self._enter("create_container", spec.name, spec.hostname)
        if not self._has_image(spec.image):
            raise AgentError(f"agent {self.id}: no such image {spec.image}", self.id)
        if any(c.spec.name == spec.name for c in self.containers.values()):
            raise AgentError(f"agent {self.id}: container name {spec.name} in use", self.id)
        box = FakeContainer(id=uuid.uuid4().hex, spec=spec)
        self.containers[box.id] = box
        return box.id

    async def put_files(self, container_id: str, files: Sequence[FileEntry]) -> None:
        """Keep the files in the container's ``files`` (or a volume it mounts), by path."""
        box = self._get(container_id)
        self._enter("put_files", container_id, box.spec.hostname)
        self._put(box, files)

    async def move_to_network(
        self, container_id: str, network: str, aliases: Sequence[str]
    ) -> None:
        """Move a created container from the default bridge to ``network`` (as
        Docker, not checked until it starts); a container that is not new on the
        default bridge is an AgentError."""
        box = self._get(container_id)
        self._enter("move_to_network", container_id, box.spec.hostname)
        if box.spec.network != DEFAULT_BRIDGE or box.status != "created":
            why = f"{box.spec.name} is not a new container on the default bridge"
            raise AgentError(f"agent {self.id}: {why}", self.id)
        box.spec = replace(box.spec, network=network, aliases=tuple(aliases))

    async def start_container(self, container_id: str) -> None:
        """Mark a container running and give its published ports fake host ports."""
        box = self._get(container_id)
        self._enter("start_container", container_id, box.spec.hostname)
        box.status, box.exit_code = "running", 0
        self._copy_tree(box)
        box.ports = {p: (self.config.address, next(self._ports)) for p in box.spec.publish}
        if self.ready_on_start:
            if "prestart.py" in " ".join(box.spec.command):  # a warm main1 (warm_pool.py)
                self.emit(container_id, "jupyter-cluster: kernel interpreter ready")
            self.emit(container_id, READY_MARKER)

    async def run_beside(
        self,
        container_id: str,
        image: str,
        script: str,
        capabilities: Sequence[str],
        labels: Mapping[str, str],
    ) -> tuple[int, str]:
        """Record the script in the container's ``beside`` list; exit code 0."""
        box = self._get(container_id)
        self._enter("run_beside", container_id, box.spec.hostname)
        if not self._has_image(image):
            return 125, f"Unable to find image '{image}'"
        box.beside.append(script)
        return 0, ""

    async def run_on_host(
        self, image: str, script: str, capabilities: Sequence[str], labels: Mapping[str, str]
    ) -> tuple[int, str]:
        """Record the script in ``host_scripts``; exit code 0."""
        self._enter("run_on_host", image)
        if not self._has_image(image):
            return 125, f"Unable to find image '{image}'"
        self.host_scripts.append(script)
        return 0, ""

    async def inspect_container(self, container_id: str) -> ContainerState | None:
        """The container's state (by id or name), or None once removed."""
        self._enter("inspect_container", container_id)
        box = self._find(container_id)
        return box.state() if box else None

    async def remove_container(self, container_id: str) -> None:
        """Forget a container (by id or name; a missing one is fine); followed logs end."""
        self._enter("remove_container", container_id)
        box = self._find(container_id)
        if box is not None:
            del self.containers[box.id]
            box.status = "removed"
            box.wake()

    async def list_containers(
        self, labels: Mapping[str, str], *, detail: bool = True
    ) -> list[ContainerState]:
        """Containers, running or not, whose labels include all of ``labels`` (always
        in detail: the fake has nothing to save)."""
        self._enter("list_containers", ",".join(f"{k}={v}" for k, v in labels.items()))
        return [c.state() for c in self.containers.values() if has_labels(c.spec.labels, labels)]

    async def close(self) -> None:
        """Mark the agent closed (state is kept, so tests can still look)."""
        self.closed = True


if TYPE_CHECKING:
    from .base import Agent

    _protocol_check: type[Agent] = FakeAgent
