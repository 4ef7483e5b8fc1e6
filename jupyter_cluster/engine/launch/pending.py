"""Waiting for room: placement attempts of a PENDING session, first in, first out.

:class:`ClusterManager` places a session once when it is submitted and then, in
its driver (the CLI, a ``--no-wait`` driver process, the server, a provisioner),
calls :func:`wait_for_room` until it is placed or ends. Placement itself happens
in the store's write transaction, which keeps each resource group's queue in
creation order (unless ``ClusterManager.pending_backfill``). A session that has
waited longer than ``ClusterManager.pending_timeout`` is cancelled with that
reason; a session ahead in the queue whose driver died on this machine is
cancelled, so it cannot hold up the queue. The placement records the session's
``queue`` and ``place`` timings (logged at debug level here).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from ...core.models import Session
from ...core.scheduler import AgentSlot, Placement
from ...core.state import SessionStatus
from ...errors import Conflict
from ..store.drivers import describe, driver_alive
from ..store.placing import WAITING_BEHIND
from ..store.sessions import Store

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class QueuePolicy:
    """How waiting works (ClusterManager's ``pending_*`` settings)."""

    poll_interval: float = 1.0
    timeout: float = 0.0  # 0: wait until cancelled
    backfill: bool = False


def place_once(
    store: Store, session_id: str, slots: Sequence[AgentSlot], policy: QueuePolicy
) -> None:
    """One placement attempt; a session cancelled meanwhile is left alone."""
    with contextlib.suppress(Conflict):
        if isinstance(store.try_place(session_id, slots, backfill=policy.backfill), Placement):
            timings = store.require(session_id).timings
            for phase in ("queue", "place"):
                log.debug("session %s: phase %s took %.3f s", session_id, phase, timings[phase])


def _cancel_abandoned(store: Store, session: Session) -> None:
    """Cancel earlier waiting sessions of the group whose driver process is gone."""
    for earlier in store.waiting_ahead(session):
        driver = store.driver(earlier.id)
        if not driver_alive(driver):
            with contextlib.suppress(Conflict):
                store.set_status(
                    earlier.id,
                    SessionStatus.CANCELLED,
                    f"the process waiting for room ({describe(driver)}) exited",
                )
                log.warning("cancelled session %s: its waiting process is gone", earlier.id)


async def wait_for_room(
    store: Store,
    session_id: str,
    slots: Callable[[str], Awaitable[list[AgentSlot]]],
    policy: QueuePolicy,
    notify: Callable[[Session], None],
) -> Session:
    """Try to place the session every ``poll_interval`` until it is no longer PENDING.

    ``slots(image)`` gives the agents as the scheduler sees them; ``notify`` is
    called whenever the waiting reason changes. Returns the session as it then is
    (PREPARING when placed, CANCELLED when cancelled or timed out).
    """
    last_reason = None
    session = store.require(session_id)
    while session.status is SessionStatus.PENDING:
        if session.status_reason != last_reason:
            last_reason = session.status_reason
            notify(session)
        if policy.timeout and time.time() - session.created_at > policy.timeout:
            with contextlib.suppress(Conflict):
                store.set_status(
                    session_id,
                    SessionStatus.CANCELLED,
                    f"waited more than {policy.timeout:g} s for room "
                    f"(ClusterManager.pending_timeout); last: {session.status_reason}",
                )
            return store.require(session_id)
        await asyncio.sleep(policy.poll_interval)
        session = store.require(session_id)
        if session.status is SessionStatus.PENDING:
            # Only a session held up by earlier ones looks at them (one query less
            # per poll for every other waiting session).
            if not policy.backfill and session.status_reason.startswith(WAITING_BEHIND):
                _cancel_abandoned(store, session)
            place_once(store, session_id, await slots(session.spec.image), policy)
            session = store.require(session_id)
    return session
