"""The warm pool's records in the store: which warm sets exist, and who took one.

Used by :class:`~.warm_pool.WarmPool` only. The table lives in the same SQLite file as
the sessions, so every process of one store (the server, CLI launches, the provisioner)
sees the same pool, and taking a set is one ``BEGIN IMMEDIATE`` transaction: two
launches can never take the same one. One row per container, with the agent it is
on; a set's rows share its id, network, the agent that made the network (a Swarm
manager for a set spread over agents) and its layout (the agent of each host).
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping

from ..core import naming
from ..core.resources import Resources
from ..core.warm import WarmSet
from .store.sessions import Store

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS warm (container_id TEXT PRIMARY KEY, set_id TEXT NOT NULL,"
    " agent TEXT NOT NULL, shape TEXT NOT NULL, host TEXT NOT NULL, network TEXT NOT NULL,"
    " total TEXT NOT NULL, session_id TEXT, created_at REAL NOT NULL,"
    " fit TEXT NOT NULL DEFAULT '', gpus TEXT NOT NULL DEFAULT '[]',"
    " layout TEXT NOT NULL DEFAULT '', net_agent TEXT NOT NULL DEFAULT '')"
)
#: Columns added since the table's first version (a store made before has none).
_ADDED = {
    "fit": "TEXT NOT NULL DEFAULT ''",
    "gpus": "TEXT NOT NULL DEFAULT '[]'",
    "layout": "TEXT NOT NULL DEFAULT ''",
    "net_agent": "TEXT NOT NULL DEFAULT ''",
}
#: The first host of every set, whose row names the set's main agent.
_MAIN = naming.hosts(1)[0]


class WarmTable:
    """Warm containers by id: ready ones (no session) and taken ones (a session id)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        with store.tx() as db:
            db.execute(_SCHEMA)
            have = {r[1] for r in db.execute("PRAGMA table_info(warm)").fetchall()}
            for column, kind in _ADDED.items():
                if column not in have:
                    db.execute(f"ALTER TABLE warm ADD COLUMN {column} {kind}")

    def add_set(
        self,
        set_id: str,
        layout: tuple[str, ...],
        shape_key: str,
        network: str,
        containers: Mapping[str, str],
        total: Resources,
        fit: str = "",
        gpu_ids: tuple[tuple[str, ...], ...] = (),
        net_agent: str = "",
    ) -> None:
        """Record a made and started set (``containers``: id by host, on the agents of
        ``layout`` in host order) as ready, with what its mounts resolved to (``fit``),
        its GPU ids per host and the agent that made its network (main1's if "")."""
        now, held, gpus = time.time(), json.dumps(total.to_dict()), json.dumps(gpu_ids)
        agents = dict(zip(containers, layout, strict=True))
        same = (shape_key, network, held, now, fit, gpus, _text(layout), net_agent or layout[0])
        with self.store.tx() as db:
            db.executemany(
                "INSERT INTO warm (container_id, set_id, agent, host, shape, network, total,"
                " created_at, fit, gpus, layout, net_agent)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [(cid, set_id, agents[h], h, *same) for h, cid in containers.items()],
            )

    def ready(self) -> list[WarmSet]:
        """Every warm set nobody has taken."""
        with self.store.tx(write=False) as db:
            rows = db.execute(
                "SELECT set_id, agent, shape, total, fit, gpus, layout FROM warm"
                " WHERE session_id IS NULL AND host = ?",
                (_MAIN,),
            ).fetchall()
        return [
            WarmSet(
                r[0],
                r[1],
                r[2],
                Resources.from_dict(json.loads(r[3])),
                r[4],
                tuple(tuple(ids) for ids in json.loads(r[5])),
                tuple(json.loads(r[6])) if r[6] else (),
            )
            for r in rows
        ]

    def take(
        self,
        session_id: str,
        layout: tuple[str, ...],
        shape_key: str,
        fit: str = "",
        gpu_ids: tuple[tuple[str, ...], ...] = (),
    ) -> tuple[str, dict[str, str]]:
        """Give ``session_id`` the oldest ready set of that shape on the agents of
        ``layout`` (host order) whose mounts resolved to ``fit`` and whose GPU ids are
        ``gpu_ids``: its network and container ids by host; ("", {}) when none."""
        with self.store.tx() as db:
            row = db.execute(
                "SELECT set_id, network FROM warm WHERE session_id IS NULL AND host = ? AND"
                " layout = ? AND shape = ? AND fit = ? AND gpus = ? ORDER BY created_at LIMIT 1",
                (_MAIN, _text(layout), shape_key, fit, json.dumps(gpu_ids)),
            ).fetchone()
            if row is None:
                return "", {}
            db.execute("UPDATE warm SET session_id = ? WHERE set_id = ?", (session_id, row[0]))
            rows = db.execute("SELECT host, container_id FROM warm WHERE set_id = ?", (row[0],))
            containers = {host: cid for host, cid in rows.fetchall()}
        return str(row[1]), containers

    def taken(self) -> list[tuple[str, str, str]]:
        """(container id, agent, session id) of every container a launch has taken."""
        with self.store.tx(write=False) as db:
            rows = db.execute(
                "SELECT container_id, agent, session_id FROM warm WHERE session_id IS NOT NULL"
            ).fetchall()
        return [(r[0], r[1], r[2]) for r in rows]

    def withdraw(self, set_ids: list[str]) -> list[tuple[str, str, list[tuple[str, str]]]]:
        """Forget those of ``set_ids`` still ready (so nobody can take them any more);
        for each, the agent that made its network, the network, and (agent, container
        id) of its containers, for the caller to remove."""
        gone = []
        with self.store.tx() as db:
            for set_id in set_ids:
                rows = db.execute(
                    "SELECT agent, network, container_id, net_agent FROM warm WHERE set_id = ?"
                    " AND session_id IS NULL ORDER BY host = ? DESC",
                    (set_id, _MAIN),
                ).fetchall()
                if rows:
                    db.execute("DELETE FROM warm WHERE set_id = ?", (set_id,))
                    net_agent = rows[0][3] or rows[0][0]
                    gone.append((net_agent, rows[0][1], [(r[0], r[2]) for r in rows]))
        return gone

    def containers_of(self, set_id: str, agent: str | None = None) -> set[str]:
        """The container ids of one set (those on ``agent`` only, when given)."""
        with self.store.tx(write=False) as db:
            rows = db.execute(
                "SELECT container_id, agent FROM warm WHERE set_id = ?", (set_id,)
            ).fetchall()
        return {r[0] for r in rows if agent is None or r[1] == agent}

    def forget(self, container_id: str) -> None:
        """Drop the record of a container (taken or not)."""
        with self.store.tx() as db:
            db.execute("DELETE FROM warm WHERE container_id = ?", (container_id,))

    def known(self) -> tuple[set[str], set[str]]:
        """The ids of every recorded warm container, and their networks."""
        with self.store.tx(write=False) as db:
            rows = db.execute("SELECT container_id, network FROM warm").fetchall()
        return {r[0] for r in rows}, {r[1] for r in rows}


def _text(layout: tuple[str, ...]) -> str:
    """A layout as stored (a JSON list; "" in rows made before layouts were kept)."""
    return json.dumps(list(layout))
