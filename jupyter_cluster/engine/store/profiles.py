"""Users' own launch profiles, kept per owner in the store's SQLite file.

A user saves a :class:`~jupyter_cluster.core.profiles.Profile` for themselves
(``PUT cluster/api/profiles/NAME``, ``jupyter cluster profile save``); only its owner
lists, uses or deletes it. The local engine (``ClusterManager.profiles``) keeps the
table beside its sessions; in team mode the shared service's engine does.
"""

from __future__ import annotations

import json
import os

from ...core.profiles import Profile, make_profile
from ...errors import NotFound
from .sqlite_file import LazyTables

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS profiles (owner TEXT NOT NULL, name TEXT NOT NULL,"
    " description TEXT NOT NULL, fields TEXT NOT NULL, PRIMARY KEY (owner, name))",
)


class ProfileStore:
    """The ``profiles`` table of the SQLite file ``path``, opened at its first use."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.tables = LazyTables(path, _SCHEMA)

    def list(self, owner: str) -> dict[str, Profile]:
        """``owner``'s profiles by name."""
        with self.tables.open().tx(write=False) as db:
            rows = db.execute(
                "SELECT name, description, fields FROM profiles WHERE owner = ? ORDER BY name",
                (owner,),
            ).fetchall()
        return {
            name: make_profile(name, {"description": text, "fields": json.loads(fields)})
            for name, text, fields in rows
        }

    def save(self, owner: str, profile: Profile) -> None:
        """Keep ``profile`` as ``owner``'s (replacing one of the same name)."""
        with self.tables.open().tx() as db:
            db.execute(
                "INSERT INTO profiles VALUES (?, ?, ?, ?) ON CONFLICT (owner, name) DO UPDATE"
                " SET description = excluded.description, fields = excluded.fields",
                (owner, profile.name, profile.description, json.dumps(dict(profile.fields))),
            )

    def remove(self, owner: str, name: str) -> None:
        """Delete ``owner``'s profile ``name``; NotFound when they have none so named."""
        with self.tables.open().tx() as db:
            gone = db.execute(
                "DELETE FROM profiles WHERE owner = ? AND name = ?", (owner, name)
            ).rowcount
        if not gone:
            raise NotFound(f"you have no launch profile named {name!r}")

    def close(self) -> None:
        """Close the file (the manager's ``close``)."""
        self.tables.close()
