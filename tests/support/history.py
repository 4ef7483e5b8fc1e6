"""A store's history filled with ended sessions, as a long-running service gathers it.

Used by the tests of ``GET sessions?limit=`` (tests/server/test_session_pages.py)
and the benchmark bench/bench_sessions_list.py: sessions that ended long ago (no
container, no key), written through the store's own API with increasing
``created_at``.
"""

from __future__ import annotations

import time
import uuid

from jupyter_cluster.core.models import LaunchSpec, Session
from jupyter_cluster.core.naming import DEFAULT_IMAGE, plan_containers
from jupyter_cluster.core.state import ContainerStatus, SessionStatus
from jupyter_cluster.engine.store.sessions import Store


def fill_history(store: Store, count: int, owner: str, size: int = 2) -> list[Session]:
    """``count`` TERMINATED sessions of ``owner`` (``size`` containers each), created a
    second apart ending an hour ago; returned oldest first."""
    spec = LaunchSpec.create(image=DEFAULT_IMAGE, size=size)
    start = time.time() - 3600 - count
    made = []
    for i in range(count):
        sid = str(uuid.uuid4())
        containers = tuple(
            c.with_(status=ContainerStatus.TERMINATED) for c in plan_containers(sid, size)
        )
        session = Session(
            id=sid,
            spec=spec,
            status=SessionStatus.TERMINATED,
            status_reason="terminated by its owner",
            containers=containers,
            created_at=start + i,
            ended_at=start + i + 0.5,
            owner=owner,
        )
        store.insert_session(session)
        made.append(session)
    return made
