"""Rebuilding a session's record from its containers, for orphans that are adopted.

:class:`~.reconcile.Reconciler` calls :func:`adopt_session` when
``ClusterManager.orphan_policy`` is ``adopt`` and Docker runs containers of this
manager that no record names: their labels and settings say the session's spec.
"""

from __future__ import annotations

import time

from ..core import naming
from ..core.models import ClusterMode, Container, LaunchSpec, Session
from ..core.resources import Mount, Resources
from ..core.state import ContainerStatus, SessionStatus
from ..core.workdir import MOUNT_POINT
from .agents.base import ContainerState


def adopt_session(session_id: str, found: list[tuple[str, ContainerState]]) -> Session:
    """Rebuild a session record from its containers' labels and settings."""
    found = sorted(found, key=lambda item: _rank(item[1].labels.get(naming.LABEL_HOST, "")))
    first = found[0][1]
    labels = first.labels
    mounts = tuple(
        Mount(m.target.rsplit("/", 1)[-1], m.readonly)
        for m in first.mounts
        if m.target.startswith(naming.WORK_HOME + "/")
    )
    workdir = next((m.source for m in first.mounts if m.target == MOUNT_POINT), None)
    name = labels.get(naming.LABEL_SESSION_NAME) or None
    spec = LaunchSpec(
        image=first.image,
        size=int(labels.get(naming.LABEL_SIZE, len(found))),
        mode=ClusterMode(labels.get(naming.LABEL_MODE, "single-node")),
        resources=first.resources or Resources(),
        mounts=mounts,
        name=None if name == session_id[:8] else name,
        workdir=workdir,
    )
    containers = []
    for agent_id, state in found:
        host = state.labels.get(naming.LABEL_HOST, "")
        rank = _rank(host)
        containers.append(
            Container(
                host=host,
                role=state.labels.get(naming.LABEL_ROLE, "sub"),
                idx=1 if rank == 0 else rank,
                local_rank=rank,
                kernel_id=state.labels.get(naming.LABEL_KERNEL, ""),
                agent=agent_id,
                status=ContainerStatus.RUNNING if state.running else ContainerStatus.EXITED,
                container_id=state.id,
            )
        )
    all_running = all(state.running for _, state in found) and len(found) == spec.size
    now = time.time()
    return Session(
        id=session_id,
        spec=spec,
        status=SessionStatus.RUNNING if all_running else SessionStatus.RUNNING_DEGRADED,
        status_reason="adopted at start-up",
        containers=tuple(containers),
        created_at=now,
        updated_at=now,
    )


def _rank(host: str) -> int:
    return 0 if host == "main1" else int(host[3:] or 0) if host.startswith("sub") else 1 << 20
