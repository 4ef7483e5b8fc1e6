"""Placement in the store: what agents hold, the waiting queue, placing sessions.

:class:`PlacingStore` adds to the store's rows the writes that must never race
another process's: placing the whole waiting queue (:meth:`~PlacingStore.
place_waiting`, in the site's order through :func:`~...core.queue.place_queue`)
or one PENDING session (:meth:`~PlacingStore.try_place`), each in a single write
transaction, so no agent is double-booked. The base of :class:`~.store.Store`; the
scheduling loop (:mod:`..launch.queue_loop`), the warm pool and ``agents``
listings call these methods.
"""

from __future__ import annotations

import builtins
import sqlite3
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from ...core import state
from ...core.models import Session
from ...core.queue_order import LABELS, order_queue
from ...core.resources import Resources
from ...core.state import ContainerStatus, SessionStatus
from ...errors import Conflict
from .drivers import Driver, describe, driver_alive
from .placing_first import FirstPlacing, capacity_per_group
from .queue_rows import WaitingRow
from .rows import status_in

if TYPE_CHECKING:  # the scheduler is imported where it places: every CLI start reads the store
    from ...core.scheduler import AgentSlot, Pending, Placement

#: How the reason of a session queued behind earlier ones begins.
WAITING_BEHIND = "waiting behind"
_ZERO = Resources(0, 0, 0, 0)


@dataclass
class QueuePass:
    """What one pass over the waiting queue did (ids), and how long it took."""

    placed: list[str] = field(default_factory=list)
    cancelled: list[str] = field(default_factory=list)
    waiting: int = 0
    seconds: float = 0.0


class PlacingStore(FirstPlacing):
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
        from ...core.scheduler import Pending, place

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
                mine = ahead[0].owner == session.owner  # names are per owner
                name = ahead[0].name if mine else "another user's session"
                result = Pending(
                    f"{WAITING_BEHIND} {len(ahead)} earlier session(s) of resource group "
                    f"{session.spec.resource_group} (first in, first out; next: {name})"
                )
            else:
                result = place(session.spec, slots)
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

    def waiting_images(self) -> set[str]:
        """The images PENDING sessions ask for (the scheduling loop asks the agents
        about each before a pass)."""
        where = status_in(frozenset({SessionStatus.PENDING}))
        sql = f"SELECT DISTINCT json_extract(record, '$.spec.image') FROM sessions WHERE {where}"
        with self.tx(write=False) as db:
            return {image for (image,) in db.execute(sql)}

    def place_waiting(
        self,
        images: Mapping[str, Sequence[AgentSlot]],
        *,
        order: str = "fifo",
        backfill: bool = False,
        timeout: float = 0.0,
        alive: Callable[[Driver | None], bool] = driver_alive,
    ) -> QueuePass:
        """Place every PENDING session that fits, in ``order`` (see :mod:`...core.
        queue_order`), in one write transaction; never double-books.

        ``images``: per image, the agents as ``slots(image)`` gives them (capacity,
        has_image…; their usage is replaced by what ALLOCATING sessions hold);
        sessions of an image not in it wait for the next pass. Each resource group's
        queue is first come, first placed in that order (a session waits behind
        an earlier one that waits) unless ``backfill``. A placed session becomes
        PREPARING with its containers' agents and GPU ids and its ``queue``/``place``
        timings; a waiting one's reason says its place in the queue; cancelled
        (with the reason) are those waiting over ``timeout`` seconds, those no agent
        could ever hold now, and those whose driver (``alive``) is gone when they
        would be placed or head their queue.
        """
        began, clock = time.time(), time.monotonic()
        done = QueuePass()
        with self.tx() as db:
            rows = self._waiting_rows(db)
            cancel: dict[str, str] = {}
            for row in rows:
                if timeout and began - row.waiting.created_at > timeout:
                    cancel[row.waiting.id] = (
                        f"waited more than {timeout:g} s for room "
                        f"(ClusterManager.pending_timeout); last: {row.reason}"
                    )
            rows = [
                r for r in rows if r.waiting.id not in cancel and r.waiting.spec.image in images
            ]
            if rows:
                self._place_rows(db, rows, images, order, backfill, alive, cancel, done)
            for session_id, reason in cancel.items():
                self._cancel(db, session_id, reason)
            done.cancelled = list(cancel)
            done.seconds = time.monotonic() - clock
        return done

    def _place_rows(
        self,
        db: sqlite3.Connection,
        rows: list[WaitingRow],
        images: Mapping[str, Sequence[AgentSlot]],
        order: str,
        backfill: bool,
        alive: Callable[[Driver | None], bool],
        cancel: dict[str, str],
        done: QueuePass,
    ) -> None:
        """The queue pass's placing (see :meth:`place_waiting`)."""
        from ...core.queue import Refused, place_queue
        from ...core.scheduler import Placement
        from ...core.waiting_reasons import queue_reason

        began, clock = time.time(), time.monotonic()
        held = self._held(db)
        self._keep_known(held.sessions | {r.waiting.id for r in rows})
        agents = next(iter(images.values()))
        slots = [
            replace(
                a,
                used=held.used.get(a.id, _ZERO),
                used_gpu_ids=frozenset(held.gpus.get(a.id, ())),
                containers=held.counts.get(a.id, 0),
            )
            for a in agents
        ]
        capacity = capacity_per_group(slots)
        by_id = {r.waiting.id: r for r in rows}
        ordered = order_queue([r.waiting for r in rows], order, capacity, held.owners)
        specs = [w.spec for w in ordered]
        results = place_queue(specs, slots, backfill=backfill, images=images, refuse=True)
        label = LABELS[order] + (", backfill" if backfill else "")
        position: dict[str, int] = {}
        head: dict[str, tuple[str, str]] = {}  # group -> first waiting's (owner, name)
        reasons: list[tuple[str, str]] = []
        placed: list[tuple[str, Placement, dict[str, float]]] = []
        for w, result in zip(ordered, results, strict=True):
            row, group = by_id[w.id], w.spec.resource_group
            if isinstance(result, Refused):
                cancel[w.id] = f"no agent can hold it any more: {result.reason}"
                continue
            first = isinstance(result, Placement) or backfill or group not in head
            # A session with no driver yet (being submitted) counts as driven.
            if first and row.driver is not None and not alive(row.driver):
                cancel[w.id] = f"the process waiting for room ({describe(row.driver)}) exited"
                continue
            if isinstance(result, Placement):
                timings = {"queue": max(0.0, began - w.created_at)}
                timings["place"] = time.monotonic() - clock
                placed.append((w.id, result, timings))
                continue
            done.waiting += 1
            position[group] = position.get(group, 0) + 1
            why = result.reason if group not in head or backfill else ""
            head.setdefault(group, (w.owner, row.name))
            # Names are per owner: another user's session is never named to this one.
            owner, name = head[group]
            ahead = name if owner == w.owner else "another user's session"
            reason = queue_reason(w.spec, position[group], label, why=why, ahead=ahead)
            if reason != row.reason:
                reasons.append((reason, w.id))
        self._write_placed(db, placed)
        done.placed = [sid for sid, _, _ in placed]
        db.executemany(
            "UPDATE sessions SET status_reason = ? WHERE id = ?",
            [(r[:2000], i) for r, i in reasons],
        )

    def _cancel(self, db: sqlite3.Connection, session_id: str, reason: str) -> None:
        """Cancel a PENDING session in the pass's transaction (its containers never
        existed)."""
        old = self._get(db, session_id)
        now = time.time()
        self._write(
            db,
            old.with_(
                status=SessionStatus.CANCELLED,
                status_reason=reason[:2000],
                updated_at=now,
                ended_at=now,
                containers=tuple(
                    c.with_(status=ContainerStatus.TERMINATED) for c in old.containers
                ),
            ),
        )

    def usage(self) -> dict[str, Resources]:
        """Resources held per agent id by ALLOCATING sessions (for ``cluster agents``)."""
        with self.tx(write=False) as db:
            return self._holdings(db)[0]
