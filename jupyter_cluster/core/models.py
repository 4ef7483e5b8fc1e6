"""The data every layer passes around: sessions and their containers.

Pure, frozen dataclasses with ``to_dict``/``from_dict`` so that the store, the CLI's
``--json`` and the REST API all share one shape. What a launch asks for, checked,
is :class:`~.launch_spec.LaunchSpec` (handed on from here, as every layer imports
it with the rest).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from ..errors import NotFound
from .apps import apps_dict
from .batch import Job
from .launch_env import env_names
from .launch_spec import SESSION_NAME_RE as SESSION_NAME_RE
from .launch_spec import ClusterMode as ClusterMode
from .launch_spec import LaunchSpec as LaunchSpec
from .launch_spec import check_session_name as check_session_name
from .state import ContainerStatus, SessionStatus
from .timings import ordered


@dataclass(frozen=True)
class Container:
    """One container of a session, as the manager knows it."""

    host: str
    role: str
    idx: int
    local_rank: int
    kernel_id: str
    agent: str | None = None
    status: ContainerStatus = ContainerStatus.PENDING
    container_id: str | None = None
    gpu_ids: tuple[str, ...] = ()
    status_reason: str = ""
    #: Processes of the still-running container the out-of-memory killer ended, and
    #: when it last did (seconds since the epoch); recorded by a server's OOM watch.
    oom_kills: int = 0
    oom_killed_at: float | None = None
    #: CPU seconds the container's processes used, as Docker last counted them (its
    #: cumulative counter, read while it runs and just before its removal:
    #: :mod:`jupyter_cluster.engine.cpu_time`); None if never read.
    cpu_seconds: float | None = None

    def with_(self, **changes: Any) -> Container:
        return replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        return {
            "host": self.host,
            "role": self.role,
            "idx": self.idx,
            "local_rank": self.local_rank,
            "kernel_id": self.kernel_id,
            "agent": self.agent,
            "status": self.status.value,
            "container_id": self.container_id,
            "gpu_ids": list(self.gpu_ids),
            "status_reason": self.status_reason,
            "oom_kills": self.oom_kills,
            "oom_killed_at": self.oom_killed_at,
            "cpu_seconds": self.cpu_seconds,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Container:
        killed_at = data.get("oom_killed_at")
        cpu = data.get("cpu_seconds")
        return cls(
            host=data["host"],
            role=data["role"],
            idx=int(data["idx"]),
            local_rank=int(data["local_rank"]),
            kernel_id=data["kernel_id"],
            agent=data.get("agent"),
            status=ContainerStatus(data.get("status", "PENDING")),
            container_id=data.get("container_id"),
            gpu_ids=tuple(data.get("gpu_ids") or ()),
            status_reason=data.get("status_reason") or "",
            oom_kills=int(data.get("oom_kills") or 0),
            oom_killed_at=None if killed_at is None else float(killed_at),
            cpu_seconds=None if cpu is None else float(cpu),
        )


@dataclass(frozen=True)
class Session:
    """A cluster session: its spec, status and containers (main1 first)."""

    id: str
    spec: LaunchSpec
    status: SessionStatus = SessionStatus.PENDING
    status_reason: str = ""
    containers: tuple[Container, ...] = ()
    created_at: float = 0.0
    updated_at: float = 0.0
    ended_at: float | None = None
    owner: str = ""
    #: Id of the Jupyter kernel a server started in main1 for this session (REST
    #: ``start_kernel``), usable with ``/api/kernels/{id}``; None when there is none.
    kernel_id: str | None = None
    #: Seconds per launch phase ended so far, in order (see :mod:`.timings`).
    timings: Mapping[str, float] = field(default_factory=dict)
    #: The Docker network of a session launched on a warm set (the set's); "" for the
    #: usual one named after the session (see :func:`.naming.network_name`).
    network: str = ""
    #: A batch session's job (:class:`.batch.Job`); None for an interactive one.
    job: Job | None = None

    @property
    def name(self) -> str:
        """The user's name for the session, or a short form of its id."""
        return self.spec.name or self.id[:8]

    @property
    def cpu_seconds_used(self) -> float | None:
        """CPU seconds its containers used, as last read (see
        :attr:`Container.cpu_seconds`); None if none was ever read."""
        read = [c.cpu_seconds for c in self.containers if c.cpu_seconds is not None]
        return sum(read) if read else None

    @property
    def hosts(self) -> list[str]:
        return [c.host for c in self.containers]

    def container(self, host: str) -> Container | None:
        """The container called ``host``, or None."""
        return next((c for c in self.containers if c.host == host), None)

    def locate(self, host: str) -> Container:
        """The container called ``host``; NotFound naming the session's hosts if none."""
        container = self.container(host)
        if container is None:
            raise NotFound(
                f"session {self.name} has no host {host!r}; its hosts are " + ", ".join(self.hosts)
            )
        return container

    def with_(self, **changes: Any) -> Session:
        return replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        """The public shape of a session (CLI ``--json``, REST)."""
        spec = self.spec.to_dict()
        job = self.job or (Job() if self.spec.command else None)
        return {
            "id": self.id,
            "name": self.name,
            "status": self.status.value,
            "status_reason": self.status_reason,
            "mode": spec["mode"],
            "size": spec["size"],
            "image": spec["image"],
            "resources": spec["resources"],
            "mounts": spec["mounts"],
            "resource_group": spec["resource_group"],
            "bootstrap": spec["bootstrap"],
            "command": spec["command"],
            "max_lifetime": spec["max_lifetime"],
            "retries": spec["retries"],
            "job": None if job is None else job.to_dict(),
            "env": env_names(self.spec.env),
            "apps": apps_dict(self.spec.apps),
            "containers": [c.to_dict() for c in self.containers],
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "ended_at": self.ended_at,
            "owner": self.owner,
            "kernel_id": self.kernel_id,
            "timings": ordered(self.timings),
        }

    def to_record(self) -> dict[str, Any]:
        """The shape the store keeps: the public one plus the spec as given."""
        return {**self.to_dict(), "spec": self.spec.to_dict(), "network": self.network}

    @classmethod
    def from_record(cls, data: Mapping[str, Any]) -> Session:
        """Rebuild a session from :meth:`to_record` output."""
        spec = LaunchSpec.from_dict(data["spec"])
        job = Job.from_dict(data["job"]) if data.get("job") else None
        return cls(
            id=data["id"],
            spec=spec,
            status=SessionStatus(data["status"]),
            status_reason=data.get("status_reason") or "",
            containers=tuple(Container.from_dict(c) for c in data.get("containers", ())),
            created_at=float(data.get("created_at") or 0.0),
            updated_at=float(data.get("updated_at") or 0.0),
            ended_at=data.get("ended_at"),
            owner=data.get("owner") or "",
            kernel_id=data.get("kernel_id") or None,
            timings=ordered(data.get("timings") or {}),
            network=str(data.get("network") or ""),
            job=job if job is not None or not spec.command else Job(),
        )

    @classmethod
    def from_public(cls, data: Mapping[str, Any]) -> Session:
        """Rebuild a session from :meth:`to_dict` output (a REST reply of the shared
        service); a name that is only the id's short form is no name."""
        name = data.get("name")
        spec = {**data, "name": None if name == str(data["id"])[:8] else name}
        return cls.from_record({**data, "spec": spec})
