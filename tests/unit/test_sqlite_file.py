"""The shared SQLite file's helpers: a private file, and tables opened at first use."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from jupyter_cluster.engine.store.sqlite_file import LazyTables, open_private

SCHEMA = ("CREATE TABLE IF NOT EXISTS notes (id INTEGER PRIMARY KEY, text TEXT NOT NULL)",)


def test_lazy_tables_open_nothing_until_used_then_make_their_tables_privately(
    tmp_path: Path,
) -> None:
    path = tmp_path / "deep" / "cluster.db"
    tables = LazyTables(path, SCHEMA)
    tables.close()  # closing what was never opened is fine
    assert not path.exists()
    with tables.open().tx() as db:
        db.execute("INSERT INTO notes (text) VALUES ('kept')")
    assert tables.open() is tables.open()  # one connection while open
    assert path.stat().st_mode & 0o777 == 0o600
    assert path.parent.stat().st_mode & 0o777 == 0o700
    tables.close()
    # opened again after a close, on the same file: the rows are there
    with tables.open().tx(write=False) as db:
        assert db.execute("SELECT text FROM notes").fetchall() == [("kept",)]
    tables.close()


def test_a_failed_transaction_leaves_nothing_and_the_tables_usable(tmp_path: Path) -> None:
    tables = LazyTables(tmp_path / "cluster.db", SCHEMA)
    with pytest.raises(sqlite3.IntegrityError), tables.open().tx() as db:
        db.execute("INSERT INTO notes (id, text) VALUES (1, 'a')")
        db.execute("INSERT INTO notes (id, text) VALUES (1, 'b')")
    with tables.open().tx(write=False) as db:
        assert db.execute("SELECT COUNT(*) FROM notes").fetchone() == (0,)
    tables.close()


def test_open_private_makes_a_group_readable_file_private_again(tmp_path: Path) -> None:
    path = tmp_path / "cluster.db"
    path.touch(mode=0o644)
    path.chmod(0o644)
    open_private(str(path)).close()
    assert path.stat().st_mode & 0o777 == 0o600
