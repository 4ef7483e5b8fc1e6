"""Waiting for room: a PENDING session's driver waits for the scheduling loop to place it.

:class:`ClusterManager` submits a session (one queue pass then places it if it
fits) and then, in its driver (the CLI, a ``--no-wait`` driver process, the
server, a provisioner), calls :func:`wait_for_room` until it is placed or ends.
Placing is the scheduling loop's (:mod:`.queue_loop`): it places the whole queue
in the store's write transaction, in the site's order, and cancels sessions that
waited longer than ``ClusterManager.pending_timeout`` or whose driver died. A
driver only watches its session's status, after each pass of its process's loop
or every ``poll_interval`` (another process's loop may have placed it).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable

from ...core.models import Session
from ...core.state import SessionStatus
from ...errors import Conflict
from ..store.sessions import Store
from .queue_loop import QueueLoop, QueuePolicy

__all__ = ["QueueLoop", "QueuePolicy", "wait_for_room"]


async def wait_for_room(
    store: Store,
    session_id: str,
    queue: QueueLoop,
    policy: QueuePolicy,
    notify: Callable[[Session], None],
) -> Session:
    """Wait until the session is no longer PENDING, keeping ``queue`` running.

    ``notify`` is called whenever the waiting reason changes. Returns the session
    as it then is (PREPARING when placed, CANCELLED when cancelled or timed out).
    """
    last_reason = None
    session = store.require(session_id)
    async with queue.waiting():
        while session.status is SessionStatus.PENDING:
            if session.status_reason != last_reason:
                last_reason = session.status_reason
                notify(session)
            if policy.timeout and time.time() - session.created_at > policy.timeout:
                with contextlib.suppress(Conflict):  # the loop may have cancelled it first
                    store.set_status(
                        session_id,
                        SessionStatus.CANCELLED,
                        f"waited more than {policy.timeout:g} s for room "
                        f"(ClusterManager.pending_timeout); last: {session.status_reason}",
                    )
                return store.require(session_id)
            await queue.next_pass(policy.poll_interval)
            session = store.require(session_id)
    return session
