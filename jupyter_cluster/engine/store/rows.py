"""The SQLite file of the store, and how sessions map to its rows.

:class:`SessionRows` opens the store's file (a private SQLite file shared by a
user's processes, :mod:`.sqlite_file`), creates its tables, and reads and writes
a session as rows: status, reason, times and the launching process in columns,
the rest in its ``to_record()`` JSON, each container a row of its own. The base of
:class:`~.store.Store`; nothing else uses it directly.
"""

from __future__ import annotations

import json
import os
import sqlite3
from typing import Any

from ...core.models import LaunchSpec, Session
from ...core.state import ENDED, SessionStatus
from ...errors import ClusterError, Conflict, NotFound
from .sqlite_file import Transactions, open_private

SCHEMA_VERSION = 1

SCHEMA = (
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS sessions (id TEXT PRIMARY KEY, name TEXT, status TEXT NOT NULL,"
    " status_reason TEXT NOT NULL DEFAULT '', record TEXT NOT NULL, created_at REAL NOT NULL,"
    " updated_at REAL NOT NULL, ended_at REAL, driver_pid INTEGER, driver_host TEXT,"
    " driver_started TEXT)",
    "CREATE INDEX IF NOT EXISTS sessions_name ON sessions (name)",
    "CREATE INDEX IF NOT EXISTS sessions_status ON sessions (status)",
    # a page of a listing (newest first) is found in the index, then only its rows are read
    "CREATE INDEX IF NOT EXISTS sessions_listing ON sessions (status, created_at)",
    # the adaptive warm pool reads the sessions of its window (RECENT_SHAPES)
    "CREATE INDEX IF NOT EXISTS sessions_created ON sessions (created_at)",
    "CREATE TABLE IF NOT EXISTS containers (session_id TEXT NOT NULL, host TEXT NOT NULL,"
    " local_rank INTEGER NOT NULL, agent TEXT, status TEXT NOT NULL, record TEXT NOT NULL,"
    " PRIMARY KEY (session_id, host))",
    # what the containers of running sessions hold, summed at every launch and queue
    # pass, is read from this index alone
    "CREATE INDEX IF NOT EXISTS containers_held ON containers (session_id, agent, status)",
    "CREATE TABLE IF NOT EXISTS keys (session_id TEXT PRIMARY KEY, material TEXT NOT NULL)",
)
UPSERT = (
    "INSERT INTO sessions (id, name, status, status_reason, record, created_at, updated_at,"
    " ended_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET"
    " name = excluded.name, status = excluded.status, status_reason = excluded.status_reason,"
    " record = excluded.record, updated_at = excluded.updated_at, ended_at = excluded.ended_at"
)
COLUMNS = "id, status, status_reason, record, created_at, updated_at, ended_at"
#: The latest placed launch of each spec and owner since a time (the adaptive warm
#: pool's demand: a spec's shape is its image, resources, size and folders); SQLite
#: takes the spec and owner from the row of MAX(created_at).
RECENT_SHAPES = (
    "SELECT MAX(created_at), json_extract(record, '$.spec'), json_extract(record, '$.owner')"
    " FROM sessions s WHERE created_at >= ?"
    " AND EXISTS (SELECT 1 FROM containers c WHERE c.session_id = s.id) AND NOT EXISTS"
    " (SELECT 1 FROM containers c WHERE c.session_id = s.id AND IFNULL(c.agent, '') = '')"
    " GROUP BY json_extract(record, '$.spec'), json_extract(record, '$.owner')"
)
#: A condition on a session's owner (kept in its JSON record).
OWNED = "json_extract(record, '$.owner') = ?"


def status_in(values: frozenset[SessionStatus]) -> str:
    """A ``status IN (...)`` SQL condition (the values are our own enum constants)."""
    return f"status IN ({','.join(sorted(repr(v.value) for v in values))})"


def refuse_taken_name(db: sqlite3.Connection, name: str | None, owner: str) -> None:
    """Conflict when ``owner`` has a session named ``name`` not ended (names are per
    owner: on a shared service nobody learns or blocks another user's names). Checked
    where a session is inserted, and by a launch's dry run."""
    if name is None:
        return
    sql = f"SELECT 1 FROM sessions WHERE name = ? AND {OWNED} AND NOT {status_in(ENDED)}"
    if db.execute(sql, (name, owner)).fetchone():
        raise Conflict(f"a session named {name} is already active; pick another name or remove it")


class SessionRows:
    """The store's file at ``path`` (created, with its parent folders, if missing)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)
        self.transactions = Transactions(open_private(self.path))
        #: One transaction (see :class:`.sqlite_file.Transactions`); the warm table uses it too.
        self.tx = self.transactions.tx
        with self.tx() as db:
            for statement in SCHEMA:
                db.execute(statement)
            columns = {row[1] for row in db.execute("PRAGMA table_info(sessions)")}
            if "driver_started" not in columns:  # a store written before it was recorded
                db.execute("ALTER TABLE sessions ADD COLUMN driver_started TEXT")
            meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
            if not {"schema_version", "manager_id"} <= meta.keys():  # a fresh store
                import uuid  # only here: every CLI command opens the store

                fresh = {"schema_version": str(SCHEMA_VERSION), "manager_id": str(uuid.uuid4())}
                db.executemany("INSERT OR IGNORE INTO meta VALUES (?, ?)", fresh.items())
                meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
        if int(meta["schema_version"]) > SCHEMA_VERSION:
            self.close()
            raise ClusterError(
                f"the store {self.path} was written by a newer jupyter-cluster (schema "
                f"{meta['schema_version']}); upgrade jupyter-cluster or use another store"
            )
        self._manager_id: str = meta["manager_id"]

    def close(self) -> None:
        """Close the connection; the store cannot be used afterwards."""
        self.transactions.close()

    @property
    def manager_id(self) -> str:
        """This database's manager id: a UUID made once, labelling our Docker objects."""
        return self._manager_id

    def _select(
        self, db: sqlite3.Connection, where: str, params: Any = (), newest: int | None = None
    ) -> list[Session]:
        """Sessions matching ``where``, oldest first, with their containers; with
        ``newest``, that many at most, newest first."""
        sql = f"SELECT {COLUMNS} FROM sessions {where} ORDER BY created_at, rowid"
        if newest is not None:
            order = "ORDER BY created_at DESC, rowid DESC"
            page = f"SELECT rowid FROM sessions {where} {order} LIMIT ?"
            sql = f"SELECT {COLUMNS} FROM sessions WHERE rowid IN ({page}) {order}"
            params = (*params, newest)
        records = []
        for sid, status, reason, record, created, updated, ended in db.execute(sql, params):
            data = json.loads(record)
            data.update(status=status, status_reason=reason, created_at=created)
            data.update(updated_at=updated, ended_at=ended, containers=[])
            records.append((sid, data))
        by_id = dict(records)
        ids = list(by_id)
        for at in range(0, len(ids), 500):  # one query per 500 sessions, not one each
            chunk = ids[at : at + 500]
            rows = db.execute(
                "SELECT session_id, record FROM containers WHERE session_id IN"
                f" ({','.join('?' * len(chunk))}) ORDER BY session_id, local_rank",
                chunk,
            )
            for sid, record in rows:
                by_id[sid]["containers"].append(json.loads(record))
        return [Session.from_record(data) for _, data in records]

    def recent_launches(self, since: float) -> list[tuple[float, LaunchSpec, str]]:
        """(when, spec, owner) of the latest placed session of each spec and owner
        created at or after ``since``, ended ones too (see :data:`RECENT_SHAPES`):
        what the adaptive warm pool keeps, read without parsing every session of its
        window at each refill. Called by ``WarmPool`` (engine/warm_demand.py)."""
        with self.tx(write=False) as db:
            rows = db.execute(RECENT_SHAPES, (since,)).fetchall()
        return [
            (at, LaunchSpec.from_dict(json.loads(spec)), owner or "") for at, spec, owner in rows
        ]

    def _get(self, db: sqlite3.Connection, session_id: str) -> Session:
        found = self._select(db, "WHERE id = ?", (session_id,))
        if not found:
            raise NotFound(f"no session has id {session_id!r}; see `jupyter cluster ls --all`")
        return found[0]

    def _write(
        self, db: sqlite3.Connection, s: Session, hosts: frozenset[str] | None = None
    ) -> None:
        """Write the session's row and its containers' rows (only those of ``hosts``
        when given: a change to one container rewrites one row, not the session's n)."""
        record = s.to_record()
        del record["containers"]
        values = (s.id, s.spec.name, s.status.value, s.status_reason, json.dumps(record))
        db.execute(UPSERT, (*values, s.created_at, s.updated_at, s.ended_at))
        db.executemany(
            "INSERT OR REPLACE INTO containers VALUES (?, ?, ?, ?, ?, ?)",
            [
                (s.id, c.host, c.local_rank, c.agent, c.status.value, json.dumps(c.to_dict()))
                for c in s.containers
                if hosts is None or c.host in hosts
            ],
        )
