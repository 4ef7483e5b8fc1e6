"""Placement in the store: what agents hold, the waiting queue, placing a session.

:class:`PlacingStore` adds to the store's rows the one write that must never race
another process's: placing a PENDING session (first in, first out per resource
group, through the pure scheduler) in a single transaction, so no agent is
double-booked. The base of :class:`~.store.Store`; the waiting queue
(:mod:`..launch.pending`), the warm pool and ``agents`` listings call these methods.
"""

from __future__ import annotations

import builtins
import sqlite3
import time
from collections.abc import Sequence
from dataclasses import replace

from ...core import scheduler, state
from ...core.models import Session
from ...core.resources import Resources
from ...core.scheduler import AgentSlot, Pending, Placement
from ...core.state import SessionStatus
from ...errors import Conflict
from .rows import SessionRows, status_in

#: How the reason of a session queued behind earlier ones begins.
WAITING_BEHIND = "waiting behind"
_ZERO = Resources(0, 0, 0, 0)


class PlacingStore(SessionRows):
    """Placement queries and the placing write (see the module docstring)."""

    def _holdings(
        self, db: sqlite3.Connection
    ) -> tuple[dict[str, Resources], dict[str, set[str]], dict[str, int]]:
        """What the containers of ALLOCATING sessions hold, per agent: resources, GPU
        ids and how many containers (a container already removed, TERMINATED, while
        its session waits for a lost agent, holds none)."""
        used: dict[str, Resources] = {}
        gpus: dict[str, set[str]] = {}
        counts: dict[str, int] = {}
        for s in self._select(db, "WHERE " + status_in(state.ALLOCATING)):
            per = s.spec.resources
            for c in s.containers:
                if c.agent is not None and c.status is not state.ContainerStatus.TERMINATED:
                    u = used.get(c.agent, _ZERO)
                    used[c.agent] = Resources(
                        u.cpu + per.cpu, u.mem + per.mem, u.shm + per.shm, u.gpu + per.gpu
                    )
                    gpus.setdefault(c.agent, set()).update(c.gpu_ids)
                    counts[c.agent] = counts.get(c.agent, 0) + 1
        return used, gpus, counts

    def waiting_ahead(self, session: Session) -> builtins.list[Session]:
        """PENDING sessions of ``session``'s resource group that came before it."""
        with self.tx(write=False) as db:
            return self._ahead(db, session)

    def _ahead(self, db: sqlite3.Connection, session: Session) -> builtins.list[Session]:
        where = f"WHERE {status_in(frozenset({SessionStatus.PENDING}))} AND id != ?"
        return [
            s
            for s in self._select(db, where, (session.id,))
            if s.spec.resource_group == session.spec.resource_group
            and (s.created_at, s.id) < (session.created_at, session.id)
        ]

    def try_place(
        self, session_id: str, agents: Sequence[AgentSlot], *, backfill: bool = False
    ) -> Placement | Pending:
        """Place a PENDING session in one write transaction; never double-books.

        ``agents`` carry capacity, GPU ids, has_image…; their usage is replaced by
        what ALLOCATING sessions hold. First in, first out: while an earlier
        session of the same resource group waits, this one waits behind it, unless
        ``backfill``. On Placement the session becomes PREPARING with each
        container's agent and GPU ids; on Pending its reason is stored. Raises
        Conflict if the session is no longer PENDING, and lets the scheduler's
        InvalidRequest through (nothing is changed then). A placed session keeps
        its ``queue`` and ``place`` timings (see :mod:`..core.timings`).
        """
        began, clock = time.time(), time.monotonic()
        with self.tx() as db:
            session = self._get(db, session_id)
            if session.status is not SessionStatus.PENDING:
                raise Conflict(
                    f"session {session.name} is {session.status.value}, not PENDING; "
                    "it cannot be placed again"
                )
            used, gpus, counts = self._holdings(db)
            slots = [
                replace(
                    a,
                    used=used.get(a.id, _ZERO),
                    used_gpu_ids=frozenset(gpus.get(a.id, ())),
                    containers=counts.get(a.id, 0),
                )
                for a in agents
            ]
            ahead = [] if backfill else self._ahead(db, session)
            result: Placement | Pending
            if ahead:
                result = Pending(
                    f"{WAITING_BEHIND} {len(ahead)} earlier session(s) of resource group "
                    f"{session.spec.resource_group} (first in, first out; next: {ahead[0].name})"
                )
            else:
                result = scheduler.place(session.spec, slots)
            if isinstance(result, Pending):
                new = session.with_(status_reason=result.reason, updated_at=time.time())
            else:
                ordered = sorted(session.containers, key=lambda c: c.local_rank)
                placed = zip(ordered, result.agents, result.gpu_ids, strict=True)
                queue = max(0.0, began - session.created_at)
                new = session.with_(
                    status=SessionStatus.PREPARING,
                    status_reason="",
                    containers=tuple(c.with_(agent=a, gpu_ids=tuple(g)) for c, a, g in placed),
                    updated_at=time.time(),
                    timings={"queue": queue, "place": time.monotonic() - clock},
                )
            self._write(db, new)
            return result

    def usage(self) -> dict[str, Resources]:
        """Resources held per agent id by ALLOCATING sessions (for ``cluster agents``)."""
        with self.tx(write=False) as db:
            return self._holdings(db)[0]
