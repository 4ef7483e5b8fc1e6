"""Opening a private SQLite file shared by several processes, and its transactions.

The store (:mod:`.sessions`), the exec log (:mod:`.exec_log`) and the launch profiles
(:mod:`.profiles`) keep their tables in SQLite files that several processes of one
user open at once: the CLI, a Jupyter server, kernel provisioners. :func:`open_private`
makes such a file mode 0600 from birth and opens it for sharing (WAL, a 10 s busy
timeout); :class:`Transactions` runs the short transactions every write is made of;
:class:`LazyTables` opens a file, and makes its tables, only once they are used.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager


def open_private(path: str) -> sqlite3.Connection:
    """A connection to the SQLite file ``path`` (made, with its folders, if missing),
    which only its owner can read: it may hold private keys."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), mode=0o700, exist_ok=True)
    # 0600 from birth; an existing file is never opened (and closed) here: closing
    # any descriptor of the file drops every SQLite lock this process holds on it,
    # and another process would then delete the shared WAL.
    with contextlib.suppress(FileExistsError):
        os.close(os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600))
    if os.stat(path).st_mode & 0o077:
        os.chmod(path, 0o600)
    db = sqlite3.connect(path, 10.0, isolation_level=None, check_same_thread=False)
    db.execute("PRAGMA busy_timeout = 10000")
    deadline = time.monotonic() + 10.0
    while True:  # switching to WAL skips the busy handler when processes open at once
        try:
            db.execute("PRAGMA journal_mode = WAL")
            break
        except sqlite3.OperationalError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.02)
    db.execute("PRAGMA synchronous = NORMAL")
    # Deleted rows (private keys of ended sessions) are overwritten, not left
    # readable in free pages of the file.
    db.execute("PRAGMA secure_delete = ON")
    return db


class Transactions:
    """Short transactions on one connection, from any thread of this process."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db
        self.lock = threading.RLock()

    @contextmanager
    def tx(self, write: bool = True) -> Iterator[sqlite3.Connection]:
        """One transaction: IMMEDIATE (write lock taken up front) or a consistent read."""
        with self.lock:
            self.db.execute("BEGIN IMMEDIATE" if write else "BEGIN")
            try:
                yield self.db
            except BaseException:
                self.db.execute("ROLLBACK")
                raise
            self.db.execute("COMMIT")

    def close(self) -> None:
        """Close the connection; no transaction can run afterwards."""
        with self.lock:
            self.db.close()


class LazyTables:
    """The tables made by ``schema`` (``CREATE … IF NOT EXISTS`` statements) in the
    SQLite file ``path``, opened at their first use: a process that never reads them
    (most CLI commands) opens nothing. Held by the exec log and the profiles."""

    def __init__(self, path: str | os.PathLike[str], schema: Sequence[str]) -> None:
        self.path = os.fspath(path)
        self.schema = tuple(schema)
        self._transactions: Transactions | None = None

    def open(self) -> Transactions:
        """The file's transactions; opens it and makes the tables the first time."""
        if self._transactions is None:
            transactions = Transactions(open_private(self.path))
            with transactions.tx() as db:
                for statement in self.schema:
                    db.execute(statement)
            self._transactions = transactions
        return self._transactions

    def close(self) -> None:
        """Close the file, if it was opened; a later use opens it again."""
        if self._transactions is not None:
            self._transactions.close()
            self._transactions = None
