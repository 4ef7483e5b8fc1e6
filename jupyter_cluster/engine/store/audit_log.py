"""The audit log's table in the engine's store: append, read, forget by age.

Append-only by design: there is no way here to change or delete one record; the
only removal is :meth:`AuditLog.prune` of records older than the retention
(``ClusterApp.audit_max_age_days``). The server writes it
(:mod:`jupyter_cluster.server.audit`), ``GET cluster/api/audit`` and ``jupyter
cluster audit`` read it. Records are :class:`~jupyter_cluster.core.audit.AuditEvent`.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from contextlib import AbstractContextManager

from ...core.audit import AuditEvent

Tx = Callable[..., AbstractContextManager[sqlite3.Connection]]

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS audit (id INTEGER PRIMARY KEY AUTOINCREMENT, at REAL NOT NULL,"
    " actor TEXT NOT NULL, front_end TEXT NOT NULL, action TEXT NOT NULL, session_id TEXT,"
    " session_name TEXT, target_owner TEXT, details TEXT NOT NULL)",
    "CREATE INDEX IF NOT EXISTS audit_at ON audit (at)",
)
_COLUMNS = "id, at, actor, front_end, action, session_id, session_name, target_owner, details"


class AuditLog:
    """The audit table in the store whose transactions ``tx`` runs (``Store.tx``)."""

    def __init__(self, tx: Tx) -> None:
        self.tx = tx
        with self.tx() as db:
            for statement in _SCHEMA:
                db.execute(statement)

    def append(self, event: AuditEvent, max_age: float = 0.0) -> int:
        """Add ``event``; with ``max_age`` (seconds), forget records older than that
        before its time. The new record's id."""
        with self.tx() as db:
            if max_age > 0:
                db.execute("DELETE FROM audit WHERE at < ?", (event.at - max_age,))
            row = (
                event.at,
                event.actor,
                event.front_end,
                event.action,
                event.session_id,
                event.session_name,
                event.target_owner,
                event.details_json(),
            )
            sql = f"INSERT INTO audit ({_COLUMNS.removeprefix('id, ')}) VALUES (?,?,?,?,?,?,?,?)"
            return int(db.execute(sql, row).lastrowid or 0)

    def prune(self, before: float) -> int:
        """Forget the records older than ``before`` (epoch s); how many went."""
        with self.tx() as db:
            return int(db.execute("DELETE FROM audit WHERE at < ?", (before,)).rowcount)

    def read(
        self,
        since: float | None = None,
        actor: str | None = None,
        action: str | None = None,
        limit: int = 1000,
    ) -> list[AuditEvent]:
        """The newest ``limit`` records matching, oldest first."""
        where: list[str] = []
        params: list[object] = []
        for column, value in (("at >=", since), ("actor =", actor), ("action =", action)):
            if value is not None:
                where.append(f"{column} ?")
                params.append(value)
        cond = f"WHERE {' AND '.join(where)}" if where else ""
        sql = f"SELECT {_COLUMNS} FROM audit {cond} ORDER BY id DESC LIMIT ?"
        with self.tx(write=False) as db:
            rows = db.execute(sql, (*params, limit)).fetchall()
        return [
            AuditEvent(
                id=r[0],
                at=r[1],
                actor=r[2],
                front_end=r[3],
                action=r[4],
                session_id=r[5],
                session_name=r[6],
                target_owner=r[7],
                details=json.loads(r[8]),
            )
            for r in reversed(rows)
        ]
