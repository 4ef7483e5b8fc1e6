"""What the store keeps beside a session's row while it lives: the process driving
its launch (or its ending) and its key material.

A base of :class:`~.sessions.Store`. The launcher, the terminator and the CLI record
drivers; reconciliation reads a session with its driver in one transaction
(:meth:`LaunchRecords.with_driver`) to judge whether a launch was abandoned; the
launch path saves, loads and deletes keys.
"""

from __future__ import annotations

import enum
import json
import sqlite3
from typing import NamedTuple

from ...core.models import Session
from ...core.state import SessionStatus
from ...errors import NotFound
from .drivers import Driver
from .rows import SessionRows

#: Records which process drives (launches or ends) a session.
SET_DRIVER = "UPDATE sessions SET driver_pid = ?, driver_host = ?, driver_started = ? WHERE id = ?"


class Keep(enum.Enum):
    """``Store.set_status``'s default: leave the recorded driver as it is."""

    DRIVER = "driver"


class LaunchState(NamedTuple):
    """A session's status, when it last changed and its driver, read together."""

    status: SessionStatus
    updated_at: float
    driver: Driver | None


class LaunchRecords(SessionRows):
    """Drivers and key material of the sessions in the store."""

    def set_driver(self, session_id: str, driver: Driver | None) -> None:
        """Record which process drives the session's launch, or clear it."""
        pid, host, started = driver or (None, None, None)
        with self.tx() as db:
            if db.execute(SET_DRIVER, (pid, host, started, session_id)).rowcount == 0:
                raise NotFound(f"no session has id {session_id!r}")

    def driver(self, session_id: str) -> Driver | None:
        """The driver recorded by :meth:`set_driver` (None if none); raises NotFound."""
        with self.tx(write=False) as db:
            return _read_driver(db, session_id)

    def with_driver(self, session_id: str) -> tuple[Session, Driver | None] | None:
        """The session and its driver read together (None if no such session).

        Reconciliation judges a launch abandoned from both: read apart, a launch that
        finished in between (RUNNING, then its driver cleared) would look like a
        PREPARING session with no driver, and a running session would be failed.
        """
        with self.tx(write=False) as db:
            found = self._select(db, "WHERE id = ?", (session_id,))
            return (found[0], _read_driver(db, session_id)) if found else None

    def launch_state(self, session_id: str) -> LaunchState | None:
        """The session's :class:`LaunchState` from its row alone (None if no such
        session): what reconciliation checks of every session it listed, cheaply,
        before it acts on one (:meth:`with_driver` also reads the containers)."""
        sql = (
            "SELECT status, updated_at, driver_pid, driver_host, driver_started"
            " FROM sessions WHERE id = ?"
        )
        with self.tx(write=False) as db:
            row = db.execute(sql, (session_id,)).fetchone()
        if row is None:
            return None
        status, updated_at, *driver = row
        return LaunchState(SessionStatus(status), updated_at, _driver(*driver))

    def save_keys(self, session_id: str, material: dict[str, str]) -> None:
        """Store (or replace) a session's key material; raises NotFound for no session."""
        with self.tx() as db:
            if not db.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone():
                raise NotFound(f"no session has id {session_id!r}")
            db.execute(
                "INSERT OR REPLACE INTO keys VALUES (?, ?)", (session_id, json.dumps(material))
            )

    def load_keys(self, session_id: str) -> dict[str, str] | None:
        """A session's key material, or None if none is stored."""
        with self.transactions.lock:
            row = self.transactions.db.execute(
                "SELECT material FROM keys WHERE session_id = ?", (session_id,)
            ).fetchone()
        return None if row is None else dict(json.loads(row[0]))

    def delete_keys(self, session_id: str) -> None:
        """Forget a session's key material (no error if there is none)."""
        with self.tx() as db:
            db.execute("DELETE FROM keys WHERE session_id = ?", (session_id,))


def _read_driver(db: sqlite3.Connection, session_id: str) -> Driver | None:
    """The driver columns of one session, in the caller's transaction."""
    sql = "SELECT driver_pid, driver_host, driver_started FROM sessions WHERE id = ?"
    row = db.execute(sql, (session_id,)).fetchone()
    if row is None:
        raise NotFound(f"no session has id {session_id!r}")
    return _driver(*row)


def _driver(pid: int | None, host: str | None, started: str | None) -> Driver | None:
    """The driver the columns ``driver_pid``, ``driver_host``, ``driver_started`` hold."""
    return None if pid is None else Driver(pid, host or "", started or "")
