"""The rows the queue pass reads and writes, read lightly enough for thousands of them.

:class:`QueueRows` gives :class:`~.placing.PlacingStore`'s queue pass what it needs
inside its write transaction without parsing every session: the waiting sessions
(each read and parsed once per store and kept, since a session's spec, owner and
creation time never change: :class:`Seen`), what
the containers of ALLOCATING sessions hold per agent and per owner (summed from
a few JSON fields in SQL), and a placement written with two UPDATEs.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple

from ...core import state
from ...core.launch_spec import LaunchSpec
from ...core.queue_order import Waiting
from ...core.resources import Resources
from .drivers import Driver
from .rows import SessionRows, status_in

if TYPE_CHECKING:
    from ...core.scheduler import Placement

log = logging.getLogger(__name__)
_ZERO = Resources(0, 0, 0, 0)
_PENDING = status_in(frozenset({state.SessionStatus.PENDING}))
_ACTIVE = (
    "FROM containers c JOIN sessions s ON s.id = c.session_id"
    f" WHERE s.{status_in(state.ALLOCATING)} AND c.agent IS NOT NULL"
    f" AND c.status != '{state.ContainerStatus.TERMINATED.value}'"
)
#: Containers holding room, counted per session and agent.
_HELD = f"SELECT c.session_id, c.agent, COUNT(*) {_ACTIVE} GROUP BY c.session_id, c.agent"


class WaitingRow(NamedTuple):
    """A PENDING session in the queue pass: who waits, its reason, its driver."""

    waiting: Waiting
    name: str
    reason: str
    driver: Driver | None


@dataclass
class Held:
    """What the containers of ALLOCATING sessions hold: per agent (resources, GPU ids,
    container count) and per (resource group, owner) (for fair share)."""

    used: dict[str, Resources] = field(default_factory=dict)
    gpus: dict[str, set[str]] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    owners: dict[tuple[str, str], Resources] = field(default_factory=dict)
    sessions: set[str] = field(default_factory=set)  # the ALLOCATING sessions' ids
    capacity: dict[str, Resources] = field(default_factory=dict)  # per group (filled later)


class Seen(NamedTuple):
    """A session as the queue keeps it once read: its queue entry (spec, owner,
    creation time) and what each of its containers holds, ready to sum."""

    waiting: Waiting
    cpu: float
    mem: int
    gpu: int
    group_owner: tuple[str, str]  # (resource group, owner): fair share's key


class QueueRows(SessionRows):
    """Light reads and writes of the queue pass (see the module docstring)."""

    #: The sessions read so far that still wait or hold room; kept per store.
    _seen: dict[str, Seen]

    def _waiting_rows(self, db: sqlite3.Connection) -> list[WaitingRow]:
        """Every PENDING session, oldest first."""
        rows = db.execute(
            "SELECT id, name, status_reason, driver_pid, driver_host, driver_started"
            " FROM sessions"
            f" WHERE {_PENDING} ORDER BY created_at, rowid"
        ).fetchall()
        self._known(db, [r[0] for r in rows])
        found = []
        for sid, name, reason, pid, host, started in rows:
            driver = Driver(pid, host, started or "") if pid is not None else None
            found.append(WaitingRow(self._seen[sid].waiting, name or sid[:8], reason, driver))
        return found

    def _known(self, db: sqlite3.Connection, ids: list[str]) -> None:
        """Read (once) the sessions ``ids`` not yet seen (see :class:`Seen`)."""
        if not hasattr(self, "_seen"):
            self._seen = {}
        seen = self._seen
        missing = [sid for sid in ids if sid not in seen]
        for at in range(0, len(missing), 500):
            chunk = missing[at : at + 500]
            for sid, spec, owner, created in db.execute(
                "SELECT id, json_extract(record, '$.spec'), json_extract(record, '$.owner'),"
                f" created_at FROM sessions WHERE id IN ({','.join('?' * len(chunk))})",
                chunk,
            ):
                parsed = LaunchSpec.from_dict(json.loads(spec))
                per, owner = parsed.resources, owner or ""
                waiting = Waiting(sid, owner, created, parsed)
                seen[sid] = Seen(waiting, per.cpu, per.mem, per.gpu, (parsed.resource_group, owner))

    def _waiting_keys(self, db: sqlite3.Connection) -> list[Waiting]:
        """Every PENDING session as the queue orders it (no reasons, no drivers)."""
        ids = [r[0] for r in db.execute(f"SELECT id FROM sessions WHERE {_PENDING}")]
        self._known(db, ids)
        seen = self._seen
        return [seen[sid].waiting for sid in ids]

    def _keep_known(self, ids: set[str]) -> None:
        """Forget the sessions no longer waiting or holding room."""
        self._seen = {sid: known for sid, known in self._seen.items() if sid in ids}

    def _held(self, db: sqlite3.Connection) -> Held:
        """What ALLOCATING sessions' containers hold now (a grouped count, and the
        GPU ids of the sessions that have GPUs)."""
        rows = db.execute(_HELD).fetchall()
        self._known(db, list({r[0] for r in rows}))
        cpu: dict[str, float] = {}
        mem: dict[str, int] = {}
        counts: dict[str, int] = {}
        held = Held(sessions={r[0] for r in rows}, counts=counts)
        owned: dict[tuple[str, str], list[float]] = {}
        with_gpus = []
        seen = self._seen
        # Thousands of rows at every pass and launch: plain tuples and dict.get only.
        for sid, agent, count in rows:
            _, per_cpu, per_mem, per_gpu, group_owner = seen[sid]
            cpu[agent] = cpu.get(agent, 0.0) + per_cpu * count
            mem[agent] = mem.get(agent, 0) + per_mem * count
            counts[agent] = counts.get(agent, 0) + count
            mine = owned.get(group_owner)
            if mine is None:
                mine = owned[group_owner] = [0.0, 0, 0]
            mine[0] += per_cpu * count
            mine[1] += per_mem * count
            if per_gpu:
                mine[2] += per_gpu * count
                with_gpus.append(sid)
        for at in range(0, len(with_gpus), 500):
            chunk = with_gpus[at : at + 500]
            for agent, ids in db.execute(
                f"SELECT c.agent, json_extract(c.record, '$.gpu_ids') {_ACTIVE}"
                f" AND c.session_id IN ({','.join('?' * len(chunk))})",
                chunk,
            ):
                held.gpus.setdefault(agent, set()).update(json.loads(ids))
        for agent, c in cpu.items():
            held.used[agent] = Resources(c, mem[agent], 0, len(held.gpus.get(agent, ())))
        held.owners = {k: Resources(v[0], int(v[1]), 0, int(v[2])) for k, v in owned.items()}
        return held

    def _write_placed(
        self, db: sqlite3.Connection, placed: list[tuple[str, Placement, dict[str, float]]]
    ) -> None:
        """Make PENDING sessions PREPARING on their placements' agents (host order):
        (session id, placement, timings) each, written with two statements; their
        ``queue`` and ``place`` timings are logged at debug level."""
        now = time.time()
        if log.isEnabledFor(logging.DEBUG):
            for sid, _, timings in placed:
                for phase, seconds in timings.items():
                    log.debug("session %s: phase %s took %.3f s", sid, phase, seconds)
        db.executemany(
            "UPDATE sessions SET status = ?, status_reason = '', updated_at = ?,"
            " record = json_set(record, '$.timings', json(?)) WHERE id = ?",
            [
                (state.SessionStatus.PREPARING.value, now, json.dumps(timings), sid)
                for sid, _, timings in placed
            ],
        )
        db.executemany(
            "UPDATE containers SET agent = ?, record = json_set(record, '$.agent', ?,"
            " '$.gpu_ids', json(?)) WHERE session_id = ? AND local_rank = ?",
            [
                (agent, agent, "[]" if not gpus else json.dumps(list(gpus)), sid, rank)
                for sid, placement, _ in placed
                for rank, (agent, gpus) in enumerate(
                    zip(placement.agents, placement.gpu_ids, strict=True)
                )
            ],
        )
