"""Admins' run-time changes to resource policies, kept in the engine's store.

An override is the policy keys an admin set for one user or one Hub group
(``PUT cluster/api/limits/users/NAME``, ``jupyter cluster limits set --user NAME``);
it wins over that entry of ``c.ClusterApp.resource_policies`` until removed
(``DELETE``, ``limits rm``). :class:`~jupyter_cluster.config.LaunchSettings`
reads them each time it resolves a policy, so a change applies to the next launch
of every front end of the engine. The table lives in the store's SQLite file, in
its transactions (``Store.tx``), as the audit log's does.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

from ...errors import NotFound

Tx = Callable[..., AbstractContextManager[sqlite3.Connection]]
KINDS = ("users", "groups")

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS policy_overrides (kind TEXT NOT NULL, name TEXT NOT NULL,"
    " fields TEXT NOT NULL, changed_at REAL NOT NULL, PRIMARY KEY (kind, name))",
)


class PolicyOverrides:
    """The ``policy_overrides`` table of the store whose transactions ``tx`` runs."""

    def __init__(self, tx: Tx) -> None:
        self.tx = tx
        with self.tx() as db:
            for statement in _SCHEMA:
                db.execute(statement)

    def all(self) -> dict[str, dict[str, dict[str, Any]]]:
        """Every override: ``{"users": {name: keys}, "groups": {name: keys}}``."""
        result: dict[str, dict[str, dict[str, Any]]] = {kind: {} for kind in KINDS}
        with self.tx(write=False) as db:
            rows = db.execute("SELECT kind, name, fields FROM policy_overrides").fetchall()
        for kind, name, fields in rows:
            result.setdefault(kind, {})[name] = json.loads(fields)
        return result

    def get(self, kind: str, name: str) -> dict[str, Any] | None:
        """The override of user or group ``name`` (``kind`` users/groups), or None."""
        with self.tx(write=False) as db:
            row = db.execute(
                "SELECT fields FROM policy_overrides WHERE kind = ? AND name = ?", (kind, name)
            ).fetchone()
        return None if row is None else dict(json.loads(row[0]))

    def put(self, kind: str, name: str, fields: dict[str, Any]) -> None:
        """Keep ``fields`` (checked policy keys, as given) as ``name``'s override."""
        with self.tx() as db:
            db.execute(
                "INSERT INTO policy_overrides VALUES (?, ?, ?, ?) ON CONFLICT (kind, name)"
                " DO UPDATE SET fields = excluded.fields, changed_at = excluded.changed_at",
                (kind, name, json.dumps(fields, sort_keys=True), time.time()),
            )

    def remove(self, kind: str, name: str) -> None:
        """Forget ``name``'s override; NotFound when there is none."""
        with self.tx() as db:
            gone = db.execute(
                "DELETE FROM policy_overrides WHERE kind = ? AND name = ?", (kind, name)
            ).rowcount
        if not gone:
            raise NotFound(f"no limits were changed at run time for {kind[:-1]} {name!r}")
