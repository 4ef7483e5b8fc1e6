"""An in-memory agent for unit tests of the manager (no Docker).

:class:`FakeAgent` implements the :class:`~.base.Agent` protocol with dicts:
containers and networks carry their labels, ``put_files`` and ``exec`` are
recorded, and tests steer it directly: ``fail_on`` injects errors, ``emit``
appends log lines, ``exit`` marks a container as exited, ``oom`` reports an
out-of-memory kill in one, ``reachable = False`` makes it look down. Nothing here
is used outside tests. What it reports is held to what the Docker agent reports by
``tests/integration/test_agent_contract.py``: change both together.
"""

from __future__ import annotations

import asyncio
import inspect
import itertools
import time
import uuid
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ...core.naming import DEFAULT_IMAGE, READY_MARKER
from ...core.resources import Resources
from ...errors import AgentError
from .base import (
    AgentConfig,
    AgentInfo,
    ContainerSpec,
    ContainerState,
    FileEntry,
    NetworkState,
    OomEvent,
    OutputCallback,
)
from .fake_images import FakeImages, is_reference


@dataclass
class FakeContainer:
    """One fake container: its spec, Docker-like status (or "removed"), log lines, files."""

    id: str
    spec: ContainerSpec
    status: str = "created"
    exit_code: int | None = 0  # Docker says 0 until the container exits
    oom_killed: bool = False
    finished_at: str = ""
    cpu_percent: float = 0.0  # what stats() reports
    cpu_seconds: float = 0.0  # what cpu_seconds() reports (a test sets it)
    mem_used: int = 0
    ports: dict[int, tuple[str, int]] = field(default_factory=dict)
    lines: list[str] = field(default_factory=list)
    files: dict[str, FileEntry] = field(default_factory=dict)
    beside: list[str] = field(default_factory=list)  # scripts run by run_beside
    waiters: list[asyncio.Future[None]] = field(default_factory=list)

    def wake(self) -> None:
        """Wake every ``logs(follow=True)`` reader waiting for news."""
        for waiter in self.waiters:
            if not waiter.done():
                waiter.set_result(None)
        self.waiters.clear()

    def state(self) -> ContainerState:
        """This container as :meth:`FakeAgent.inspect_container` reports it: its
        settings as Docker reads them back (CPUs to the nanoCPU, Docker's 64m of
        shared memory when the spec asks none, one GPU per device id)."""
        res = self.spec.resources
        return ContainerState(
            id=self.id,
            name=self.spec.name,
            labels=dict(self.spec.labels),
            running=self.status == "running",
            status=self.status,
            exit_code=self.exit_code,
            oom_killed=self.oom_killed,
            finished_at=self.finished_at,
            ports=dict(self.ports),
            image=self.spec.image,
            resources=Resources(
                cpu=round(res.cpu * 1e9) / 1e9,
                mem=res.mem,
                shm=res.shm or DOCKER_SHM,
                gpu=len(self.spec.gpu_ids),
            ),
            mounts=tuple(self.spec.mounts),
        )


@dataclass(frozen=True)
class ExecCall:
    """One recorded ``exec``: where, what, as whom."""

    container_id: str
    cmd: tuple[str, ...]
    user: str
    workdir: str
    env: Mapping[str, str]


#: Answers an exec: given the container and the call, returns (exit code, stdout).
ExecHandler = Callable[[FakeContainer, ExecCall], tuple[int, bytes]]

#: The shared memory Docker gives a container whose spec asks none (its default).
DOCKER_SHM = 64 * 1024**2


#: The parts of an image reference, as Docker parses it (see _is_reference).
class FakeAgent(FakeImages):
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
            agent_id, f"fake://{agent_id}", resource_group, address, cpu, mem, tuple(gpus)
        )
        self.images = set(images)
        self.registry = set()
        self.pulls = []
        self.containers: dict[str, FakeContainer] = {}
        self.networks: dict[str, NetworkState] = {}
        self.mtus: dict[str, int] = {}  # per network name: the MTU asked (0: default)
        self.bridges: dict[str, str] = {}  # per network name: the bridge name asked
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

    def emit(self, container_id: str, line: str) -> None:
        """Append a log line (a newline is added if missing) and wake followers."""
        box = self._get(container_id)
        box.lines.append(line if line.endswith("\n") else line + "\n")
        box.wake()

    async def stats(self, container_id: str) -> Mapping[str, Any]:
        """Docker-shaped stats of a running container: ``cpu_percent`` (of one CPU)
        and ``mem_used`` set on the box by a test, the memory limit from its spec."""
        self._enter("stats", container_id)
        box = self._get(container_id)
        if box.status != "running":
            raise AgentError(
                f"agent {self.id}: container {container_id[:12]} is not running", self.id
            )
        busy = int(box.cpu_percent * 1e7)  # of 1e9 system ns over one CPU
        return {
            "read": "2026-01-01T00:00:00.000000000Z",
            "cpu_stats": {
                "cpu_usage": {"total_usage": busy},
                "system_cpu_usage": 10**9,
                "online_cpus": 1,
            },
            "precpu_stats": {"cpu_usage": {"total_usage": 0}, "system_cpu_usage": 0},
            "memory_stats": {"usage": box.mem_used, "limit": box.spec.resources.mem},
            "networks": {"eth0": {"rx_bytes": 10, "tx_bytes": 20}},
            "pids_stats": {"current": 1},
        }

    async def cpu_seconds(self, container_id: str) -> float:
        """The CPU seconds a test set on the running container's box."""
        self._enter("cpu_seconds", container_id)
        box = self._get(container_id)
        if box.status != "running":
            raise AgentError(
                f"agent {self.id}: container {container_id[:12]} is not running", self.id
            )
        return box.cpu_seconds

    def exit(self, container_id: str, code: int = 0, *, oom: bool = False) -> None:
        """Mark a container as exited with ``code`` (``oom``: by the out-of-memory
        killer) now; followed logs end."""
        box = self._get(container_id)
        box.status, box.exit_code, box.oom_killed = "exited", code, oom
        box.finished_at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        box.ports = {}  # Docker releases the published ports
        box.wake()

    def oom(self, container_id: str, at: float | None = None) -> OomEvent:
        """Report that the out-of-memory killer ended a process in the container
        (which keeps running) at ``at`` (default now); followers of oom_events see it."""
        event = OomEvent(self._get(container_id).id, time.time() if at is None else at)
        self.ooms.append(event)
        self._oom_wake.set()
        return event

    def end_streams(self) -> None:
        """End every oom_events follower, as an engine that restarts does."""
        self._streams_ended += 1
        self._oom_wake.set()

    async def oom_events(
        self, labels: Mapping[str, str], *, since: float | None = None
    ) -> AsyncIterator[OomEvent]:
        """The OOM kills reported from now (and since ``since``) in containers with
        ``labels`` (removed ones: by the labels they had), until end_streams()."""
        self._enter("oom_events", "")
        ended, seen = self._streams_ended, len(self.ooms)
        specs = {box.id: box.spec for box in self.containers.values()}
        if since is not None:
            seen = next((i for i, e in enumerate(self.ooms) if e.time >= since), seen)
        while ended == self._streams_ended:
            while seen < len(self.ooms):
                event = self.ooms[seen]
                seen += 1
                box = self.containers.get(event.container_id)
                spec = box.spec if box else specs.get(event.container_id)
                if spec is not None and _has_labels(spec.labels, labels):
                    yield event
            self._oom_wake.clear()
            await self._oom_wake.wait()

    def by_host(self, hostname: str) -> FakeContainer:
        """The container with this hostname; KeyError when there is none."""
        return {box.spec.hostname: box for box in self.containers.values()}[hostname]

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
        """Record a network (its MTU in ``mtus``, its bridge name in ``bridges``); a
        name already in use, or an overlay on an agent that is not a Swarm node
        (``swarm = ""``), is an AgentError, as in Docker."""
        self._enter("create_network", name)
        self.mtus[name] = mtu
        self.bridges[name] = bridge_name
        if any(n.name == name for n in self.networks.values()):
            raise AgentError(f"agent {self.id}: network {name} already exists", self.id)
        if overlay and (not self.swarm or self.swarm_worker):
            raise AgentError(
                f"agent {self.id}: creating network {name} failed: this node is not a swarm "
                "manager (an overlay network needs a Swarm)",
                self.id,
            )
        net_id = uuid.uuid4().hex
        driver = "overlay" if overlay else "bridge"
        self.networks[net_id] = NetworkState(net_id, name, dict(labels), driver)
        return net_id

    async def device_nodes(
        self, directory: str, image: str, labels: Mapping[str, str]
    ) -> tuple[str, ...]:
        """Those of ``device_paths`` directly under ``directory``."""
        self._enter("device_nodes", directory)
        root = directory.rstrip("/")
        return tuple(sorted(p for p in self.device_paths if p.rpartition("/")[0] == root))

    async def remove_network(self, name_or_id: str) -> None:
        """Forget a network by name or id; a missing one is fine, one that a running
        container uses is an AgentError (as in Docker: it has active endpoints)."""
        self._enter("remove_network", name_or_id)
        for net_id, net in list(self.networks.items()):
            if name_or_id not in (net_id, net.name):
                continue
            users = [
                box.spec.name
                for box in self.containers.values()
                if box.status == "running" and box.spec.network in (net_id, net.name)
            ]
            if users:
                raise AgentError(
                    f"agent {self.id}: removing network {net.name} failed: it has active "
                    f"endpoints ({', '.join(users)})",
                    self.id,
                )
            del self.networks[net_id]

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
        """Keep the files in the container's ``files``, by path."""
        box = self._get(container_id)
        self._enter("put_files", container_id, box.spec.hostname)
        for entry in files:
            box.files[entry.path] = entry

    async def start_container(self, container_id: str) -> None:
        """Mark a container running and give its published ports fake host ports."""
        box = self._get(container_id)
        self._enter("start_container", container_id, box.spec.hostname)
        box.status, box.exit_code = "running", 0
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

    async def logs(
        self,
        container_id: str,
        *,
        tail: int | None = None,
        follow: bool = False,
        for_user: bool = False,
    ) -> AsyncIterator[str]:
        """Lines emitted so far (the last ``tail``), then, with ``follow`` and while
        the container runs, new ones until it exits or is removed."""
        self._enter("logs", container_id)
        box = self._get(container_id)
        i = 0 if tail is None else max(0, len(box.lines) - tail)
        while True:
            while i < len(box.lines):
                i += 1
                yield box.lines[i - 1]
            if not follow or box.status != "running":
                return
            waiter = asyncio.get_running_loop().create_future()
            box.waiters.append(waiter)
            await waiter

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
        """Record the call and answer with ``exec_handler`` (default: exit 0, no output)."""
        box = self._get(container_id)
        self._enter("exec", container_id, box.spec.hostname)
        if box.status != "running":
            raise AgentError(f"agent {self.id}: container {container_id} is not running", self.id)
        call = ExecCall(container_id, tuple(cmd), user, workdir, dict(env or {}))
        self.execs.append(call)
        code, out = self.exec_handler(box, call) if self.exec_handler else (0, b"")
        if out and on_output is not None:
            result = on_output(1, out)
            if inspect.isawaitable(result):
                await result
        return code

    async def list_containers(self, labels: Mapping[str, str]) -> list[ContainerState]:
        """Containers, running or not, whose labels include all of ``labels``."""
        self._enter("list_containers", "")
        return [c.state() for c in self.containers.values() if _has_labels(c.spec.labels, labels)]

    async def list_networks(self, labels: Mapping[str, str]) -> list[NetworkState]:
        """Networks whose labels include all of ``labels``."""
        self._enter("list_networks", "")
        return [n for n in self.networks.values() if _has_labels(n.labels, labels)]

    async def close(self) -> None:
        """Mark the agent closed (state is kept, so tests can still look)."""
        self.closed = True

    def _enter(self, method: str, target: str, hostname: str | None = None) -> None:
        self.calls.append((method, target))
        if not self.reachable:
            raise AgentError(f"agent {self.id}: cannot reach the fake engine", self.id)
        keys = [method]
        if hostname is not None:
            keys.append(f"{method}:{hostname}")
            if method == "create_container":
                keys.append(hostname)
        for key in keys:
            if key in self.fail_on:
                raise self.fail_on[key]

    def _find(self, container_id: str) -> FakeContainer | None:
        """A container by id or, as Docker also accepts, by name."""
        box = self.containers.get(container_id)
        if box is None:
            box = next((c for c in self.containers.values() if c.spec.name == container_id), None)
        return box

    def _get(self, container_id: str) -> FakeContainer:
        box = self._find(container_id)
        if box is None:
            raise AgentError(f"agent {self.id}: no such container {container_id}", self.id)
        return box


def _has_labels(have: Mapping[str, str], want: Mapping[str, str]) -> bool:
    return all(have.get(k) == v for k, v in want.items())


if TYPE_CHECKING:
    from .base import Agent

    _protocol_check: type[Agent] = FakeAgent
