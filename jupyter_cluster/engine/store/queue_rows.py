"""The rows the queue pass reads and writes, read lightly enough for thousands of them.

:class:`QueueRows` gives :class:`~.placing.PlacingStore`'s queue pass what it needs
inside its write transaction without parsing every session: the waiting sessions
(their specs parsed once per store and kept, since a spec never changes), what
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


class QueueRows(SessionRows):
    """Light reads and writes of the queue pass (see the module docstring)."""

    #: Specs and owners of sessions seen (they never change); kept per store.
    _specs: dict[str, LaunchSpec]
    _owners: dict[str, str]
    #: Per session: (CPU, memory, GPUs) of each container, (resource group, owner).
    _loads: dict[str, tuple[float, int, int, tuple[str, str]]]
    #: The queue's view of each waiting session, made once.
    _waiting: dict[str, Waiting]

    def _waiting_rows(self, db: sqlite3.Connection) -> list[WaitingRow]:
        """Every PENDING session, oldest first."""
        rows = db.execute(
            "SELECT id, name, status_reason, created_at, driver_pid, driver_host,"
            " driver_started FROM sessions"
            f" WHERE {_PENDING} ORDER BY created_at, rowid"
        ).fetchall()
        self._known(db, [r[0] for r in rows])
        found = []
        for sid, name, reason, created, pid, host, started in rows:
            driver = Driver(pid, host, started or "") if pid is not None else None
            waiting = Waiting(sid, self._owners[sid], created, self._specs[sid])
            found.append(WaitingRow(waiting, name or sid[:8], reason, driver))
        return found

    def _known(self, db: sqlite3.Connection, ids: list[str]) -> None:
        """Read (once) the spec and owner of the sessions ``ids`` not yet known, and
        what each of its containers holds (CPU, memory, GPUs, its group and owner)."""
        if not hasattr(self, "_specs"):
            self._specs, self._owners, self._loads, self._waiting = {}, {}, {}, {}
        missing = [sid for sid in ids if sid not in self._specs]
        for at in range(0, len(missing), 500):
            chunk = missing[at : at + 500]
            for sid, spec, owner in db.execute(
                "SELECT id, json_extract(record, '$.spec'), json_extract(record, '$.owner')"
                f" FROM sessions WHERE id IN ({','.join('?' * len(chunk))})",
                chunk,
            ):
                parsed = LaunchSpec.from_dict(json.loads(spec))
                per = parsed.resources
                self._specs[sid] = parsed
                self._owners[sid] = owner or ""
                self._loads[sid] = (per.cpu, per.mem, per.gpu, (parsed.resource_group, owner or ""))

    def _waiting_keys(self, db: sqlite3.Connection) -> list[Waiting]:
        """Every PENDING session as the queue orders it (no reasons, no drivers)."""
        rows = db.execute(f"SELECT id, created_at FROM sessions WHERE {_PENDING}").fetchall()
        self._known(db, [r[0] for r in rows])
        waiting = self._waiting
        found = []
        for sid, created in rows:
            entry = waiting.get(sid)
            if entry is None:  # a session's owner, creation time and spec never change
                entry = waiting[sid] = Waiting(sid, self._owners[sid], created, self._specs[sid])
            found.append(entry)
        return found

    def _keep_known(self, ids: set[str]) -> None:
        """Forget the specs of sessions no longer waiting or holding room."""
        self._specs = {sid: spec for sid, spec in self._specs.items() if sid in ids}
        self._owners = {sid: o for sid, o in self._owners.items() if sid in ids}
        self._loads = {sid: load for sid, load in self._loads.items() if sid in ids}
        self._waiting = {sid: w for sid, w in self._waiting.items() if sid in ids}

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
        loads = self._loads
        # Thousands of rows at every pass and launch: plain tuples and dict.get only.
        for sid, agent, count in rows:
            per_cpu, per_mem, per_gpu, group_owner = loads[sid]
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
