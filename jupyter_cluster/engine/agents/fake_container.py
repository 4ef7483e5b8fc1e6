"""What a fake agent keeps per container, and the bookkeeping every part of it shares.

:class:`FakeContainer` is one container of :class:`~.fake.FakeAgent` (its spec,
Docker-like status, log lines, files); :class:`ExecCall` one recorded ``exec``.
:class:`FakeAgentState` records each call, injects the errors a test asked for
(``fail_on``), and finds containers by id or name, for :mod:`.fake` and
:mod:`.fake_io`. For the pure core's unit tests only.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from ...core.resources import Resources
from ...errors import AgentError
from .base import ContainerSpec, ContainerState, FileEntry


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


def has_labels(have: Mapping[str, str], want: Mapping[str, str]) -> bool:
    """Whether ``have`` carries every label of ``want``."""
    return all(have.get(k) == v for k, v in want.items())


class FakeAgentState:
    """The containers of a fake agent, its record of calls and its injected faults."""

    containers: dict[str, FakeContainer]
    calls: list[tuple[str, str]]
    fail_on: dict[str, Exception]
    reachable: bool

    @property
    def id(self) -> str:
        """The agent's id (the fake agent's configuration says)."""
        raise NotImplementedError

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
