"""The exec log: commands running in sessions' containers, for the idle clean-up.

A server's idle watcher (``server/idle.py``) counts a running ``exec`` as use of its
session, whichever process runs it: the CLI (``jupyter cluster exec``, ``--all``),
the server's REST route, a notebook's ``ClusterSession``. Each such process records
its command here while it runs, and when the session was last used this way. The
log is a SQLite file every process of a user on one machine shares: the store's own
file for a local engine (the ClusterManager), and ``activity.db`` beside it for the
shared service's client (RemoteEngine), whose commands go over SSH and so are seen
by no one else. A record whose process has died no longer counts (the reader checks
:func:`~.drivers.driver_alive`).
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager

from .drivers import Driver, this_process
from .sqlite_file import LazyTables

_SCHEMA = (
    # The store's files from before this module kept the same ``execs`` table.
    "CREATE TABLE IF NOT EXISTS execs (id INTEGER PRIMARY KEY, session_id TEXT NOT NULL,"
    " pid INTEGER NOT NULL, host TEXT NOT NULL, started TEXT NOT NULL)",
    "CREATE INDEX IF NOT EXISTS execs_session ON execs (session_id)",
    "CREATE TABLE IF NOT EXISTS exec_last (session_id TEXT PRIMARY KEY, at REAL NOT NULL)",
)
#: Sessions unused this long are forgotten (their records are of ended sessions).
KEEP_LAST = 30 * 86400.0


class ExecLog:
    """The exec log in the SQLite file ``path``, opened at its first use."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.tables = LazyTables(path, _SCHEMA)

    def began(self, session_id: str, driver: Driver) -> int:
        """Record that process ``driver`` runs a command in a container of the session,
        which is used now; the record's id for :meth:`ended`."""
        now = time.time()
        with self.tables.open().tx() as db:
            self._touch(db, session_id, now)
            sql = "INSERT INTO execs (session_id, pid, host, started) VALUES (?, ?, ?, ?)"
            return int(db.execute(sql, (session_id, *driver)).lastrowid or 0)

    def ended(self, exec_id: int) -> None:
        """The command ``exec_id`` has ended: forget it; its session was used now."""
        with self.tables.open().tx() as db:
            row = db.execute("SELECT session_id FROM execs WHERE id = ?", (exec_id,)).fetchone()
            if row is not None:
                self._touch(db, row[0], time.time())
                db.execute("DELETE FROM execs WHERE id = ?", (exec_id,))

    @staticmethod
    def _touch(db: sqlite3.Connection, session_id: str, now: float) -> None:
        db.execute("DELETE FROM exec_last WHERE at < ?", (now - KEEP_LAST,))
        # Records left by processes that died, of sessions unused for that long.
        db.execute("DELETE FROM execs WHERE session_id NOT IN (SELECT session_id FROM exec_last)")
        db.execute(
            "INSERT INTO exec_last VALUES (?, ?) ON CONFLICT (session_id) DO UPDATE SET at = ?",
            (session_id, now, now),
        )

    @contextmanager
    def running(self, session_id: str) -> Iterator[None]:
        """Record a command of this process in the session for as long as the block
        runs (ClusterManager.exec and RemoteEngine.exec wrap their commands in it)."""
        exec_id = self.began(session_id, this_process())
        try:
            yield
        finally:
            # A failing log must not hide the command's own outcome; a record left
            # behind stops counting once this process has ended.
            with contextlib.suppress(sqlite3.Error):
                self.ended(exec_id)

    def activity(self, session_id: str) -> tuple[float | None, list[Driver]]:
        """When a command in the session last began or ended (None: never here), and
        the processes of those recorded as running (the idle watcher asks)."""
        with self.tables.open().tx(write=False) as db:
            sql = "SELECT at FROM exec_last WHERE session_id = ?"
            found = db.execute(sql, (session_id,)).fetchone()
            sql = "SELECT pid, host, started FROM execs WHERE session_id = ? ORDER BY id"
            running = [Driver(*r) for r in db.execute(sql, (session_id,))]
        return (found[0] if found else None), running

    def close(self) -> None:
        """Close the file, if it was opened."""
        self.tables.close()
