"""SQLite store: sessions, their containers, history, key material, placement.

One database file shared by every process of a user (the CLI, a Jupyter server,
kernel provisioners). WAL mode and a 10 s busy timeout let them queue rather than
fail; every write is a short ``BEGIN IMMEDIATE`` transaction, so a read-check-write
(a status change, a placement) never interleaves with another process's and no
agent is double-booked. The file is mode 0600: it holds the sessions' private keys.

Called by the ClusterManager and reconciliation; the pure core never imports it.
The file and the row mapping are :mod:`.rows`, placement :mod:`.placing`, drivers
and key material :mod:`.launch_records`; this module has the sessions' life in the
store and their history.
"""

from __future__ import annotations

import builtins
import time
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from ...core import state
from ...core.models import Session
from ...core.quota import Quota
from ...core.state import ENDED, ContainerStatus, SessionStatus
from ...errors import Conflict, InvalidRequest, NotFound
from .drivers import Driver
from .launch_records import SET_DRIVER, Keep, LaunchRecords
from .placing import PlacingStore
from .rows import OWNED, refuse_taken_name, status_in

#: Fewest characters of an id that ``resolve`` takes as its prefix.
MIN_PREFIX = 4


class Store(PlacingStore, LaunchRecords):
    """The SQLite store at ``path`` (created, with its parent folders, if missing)."""

    def insert_session(
        self, session: Session, quota: Quota | None = None, driver: Driver | None = None
    ) -> None:
        """Store a new session and its containers, with the process that drives it.

        ``created_at`` defaults to now when zero; ``updated_at`` is now. Raises
        Conflict when the id exists, another session not ended has the same name,
        or it would take its owner over ``quota`` (checked in the same transaction).
        The driver is written in the same transaction: a reconciliation in another
        process must never see a new session without one and take it as abandoned.
        """
        now = time.time()
        session = session.with_(created_at=session.created_at or now, updated_at=now)
        with self.tx() as db:
            if db.execute("SELECT 1 FROM sessions WHERE id = ?", (session.id,)).fetchone():
                raise Conflict(f"a session with id {session.id} already exists")
            refuse_taken_name(db, session.spec.name, session.owner)
            if quota is not None and not quota.unlimited:
                where = f"WHERE {status_in(state.LIVE)} AND {OWNED}"
                held = self._select(db, where, (session.owner,))
                refusal = quota.refusal(held, session)
                if refusal:
                    raise Conflict(refusal)
            self._write(db, session)
            if driver is not None:
                db.execute(SET_DRIVER, (driver.pid, driver.host, driver.started, session.id))

    def get(self, session_id: str) -> Session | None:
        """The session with exactly this id, or None."""
        with self.tx(write=False) as db:
            found = self._select(db, "WHERE id = ?", (session_id,))
        return found[0] if found else None

    def require(self, session_id: str) -> Session:
        """The session with exactly this id; NotFound when there is none (the engine's
        launcher, terminator and queue use it for sessions they know exist)."""
        session = self.get(session_id)
        if session is None:
            raise NotFound(f"no session has id {session_id!r}; see `jupyter cluster ls --all`")
        return session

    def find_container(self, container_id: str) -> tuple[str, str] | None:
        """(session id, host) of the Docker container ``container_id`` among live
        sessions, or None (the server's OOM watch maps Docker's events with it)."""
        sql = (
            "SELECT c.session_id, c.host FROM containers c JOIN sessions s ON s.id = c.session_id"
            f" WHERE json_extract(c.record, '$.container_id') = ? AND s.{status_in(state.LIVE)}"
        )
        with self.tx(write=False) as db:
            row = db.execute(sql, (container_id,)).fetchone()
        return None if row is None else (row[0], row[1])

    def resolve(self, ref: str, owner: str | None = None) -> Session:
        """Find the session a user means by ``ref``: an id, a name or an id prefix.

        Exact id first; then exact name (the newest active one, else the newest);
        then a unique id prefix of at least 4 characters. With ``owner``, only
        that owner's sessions count (another user's name never hides one's own);
        without (an admin's view), a name that several users' active sessions have
        is ambiguous, so an admin never ends another user's ``demo`` by mistake.
        Raises NotFound, or InvalidRequest listing the candidates when a prefix or
        such a name is ambiguous.
        """
        mine = "" if owner is None else f" AND {OWNED}"
        who: tuple[str, ...] = () if owner is None else (owner,)
        with self.tx(write=False) as db:
            found = self._select(db, "WHERE id = ?" + mine, (ref, *who))
            if not found:
                named = self._select(db, "WHERE name = ?" + mine, (ref, *who))
                active = [s for s in named if s.status in state.ACTIVE]
                if len({s.owner for s in active}) > 1:  # only when all owners count
                    listed = ", ".join(f"{s.id} (of {s.owner or 'nobody'})" for s in active)
                    raise InvalidRequest(
                        f"{ref!r} names active sessions of several users: {listed}; "
                        "give the session's id",
                        "session",
                    )
                found = (active or named)[-1:]
            if not found and len(ref) >= MIN_PREFIX:
                found = self._select(db, "WHERE substr(id, 1, ?) = ?" + mine, (len(ref), ref, *who))
        if not found:
            raise NotFound(f"no session matches {ref!r}; see `jupyter cluster ls --all`")
        if len(found) > 1:
            listed = ", ".join(f"{s.id} ({s.name}, {s.status.value})" for s in found)
            raise InvalidRequest(
                f"{ref!r} matches several sessions: {listed}; give more of the id or a name",
                "session",
            )
        return found[0]

    def list(self, include_ended: bool = False) -> list[Session]:
        """Sessions oldest first; only those in ``state.ACTIVE`` unless ``include_ended``."""
        where = "" if include_ended else f"WHERE {status_in(state.ACTIVE)}"
        with self.tx(write=False) as db:
            return self._select(db, where)

    def page(
        self,
        statuses: frozenset[SessionStatus],
        limit: int,
        before: str | None = None,
        owner: str | None = None,
    ) -> builtins.list[Session]:
        """At most ``limit`` sessions in ``statuses`` (``owner``'s, if given), newest
        first, created before the session ``before`` (the last of the previous page):
        a page of ``GET sessions?limit=``. InvalidRequest when ``before`` is no such
        session (e.g. one the history has forgotten since)."""
        where, params = [status_in(statuses)], []
        if owner is not None:
            where.append(OWNED)
            params.append(owner)
        with self.tx(write=False) as db:
            if before is not None:
                found = f"SELECT created_at, rowid FROM sessions WHERE id = ? AND {where[-1]}"
                row = db.execute(found, (before, *params[-1:])).fetchone()
                if row is None:
                    raise InvalidRequest(
                        f"before: no session {before!r} (the history may have forgotten it); "
                        "list again without before",
                        "before",
                    )
                where.append("(created_at < ? OR (created_at = ? AND rowid < ?))")
                params += [row[0], row[0], row[1]]
            return self._select(db, "WHERE " + " AND ".join(where), params, newest=limit)

    def set_status(
        self,
        session_id: str,
        status: SessionStatus,
        reason: str | None = None,
        *,
        driver: Driver | Keep | None = Keep.DRIVER,
    ) -> Session:
        """Move a session to ``status`` if the state machine allows it; return it.
        With ``driver`` (a process, or None to clear it), the session's driver is
        recorded in the same transaction: no other process sees the new status with
        the old driver (e.g. a removal no process is yet recorded as doing).

        Raises Conflict (refused transition) or NotFound. ``reason=None`` clears the
        reason on a change of status and keeps it otherwise. ``ended_at`` is set
        when the session enters TERMINATED, CANCELLED or ERROR.
        """
        status = SessionStatus(status)
        with self.tx() as db:
            old = self._get(db, session_id)
            state.check_transition(old.status, status)
            now, changed = time.time(), status != old.status
            if reason is None:
                reason = "" if changed else old.status_reason
            ended = now if changed and status in ENDED else old.ended_at
            new = old.with_(status=status, status_reason=reason, updated_at=now, ended_at=ended)
            if status is SessionStatus.CANCELLED:  # its containers will never exist
                new = new.with_(
                    containers=tuple(
                        c.with_(status=ContainerStatus.TERMINATED) for c in new.containers
                    )
                )
            self._write(db, new)
            if not isinstance(driver, Keep):
                pid, host, started = driver or (None, None, None)
                db.execute(SET_DRIVER, (pid, host, started, session_id))
        return new

    def update_container(
        self,
        session_id: str,
        host: str,
        *,
        only_while: SessionStatus | None = None,
        **changes: Any,
    ) -> Session:
        """Change fields of one container (status, container_id, status_reason, …).

        Returns the updated session; raises NotFound for an unknown session or host.
        With ``only_while``, raises Conflict (and changes nothing) unless the session
        has that status: a launch reports its containers' progress only while the
        session is PREPARING, never into one that another process ended meanwhile.
        """
        if "host" in changes:
            raise TypeError("a container's host cannot change")
        if "status" in changes:
            changes["status"] = ContainerStatus(changes["status"])
        if "gpu_ids" in changes:
            changes["gpu_ids"] = tuple(changes["gpu_ids"])
        with self.tx() as db:
            old = self._get(db, session_id)
            old.locate(host)
            if only_while is not None and old.status is not only_while:
                raise Conflict(
                    f"session {old.name} is {old.status.value} now, not {only_while.value}"
                )
            containers = tuple(
                replace(c, **changes) if c.host == host else c for c in old.containers
            )
            new = old.with_(containers=containers, updated_at=time.time())
            self._write(db, new, hosts=frozenset((host,)))
        return new

    def mark_terminating(self, session_id: str, driver: Driver) -> bool:
        """A running session is being ended by ``driver`` (this process), its removal
        to follow once its kernel has exited; whether this call marked it (False if
        it was not running). Its reason says so (``state.KERNEL_EXITING``) and
        ``driver`` is recorded, so reconciliation leaves it to this process."""
        with self.tx() as db:
            old = self._get(db, session_id)
            if old.status not in state.USABLE:
                return False
            new = old.with_(
                status=SessionStatus.TERMINATING,
                status_reason=state.KERNEL_EXITING,
                updated_at=time.time(),
            )
            self._write(db, new)
            db.execute(SET_DRIVER, (driver.pid, driver.host, driver.started, session_id))
            return True

    def set_network(self, session_id: str, network: str) -> Session:
        """Record the Docker network of a session launched on a warm set."""
        with self.tx() as db:
            new = self._get(db, session_id).with_(network=network, updated_at=time.time())
            self._write(db, new)
        return new

    def add_timings(self, session_id: str, timings: Mapping[str, float]) -> Session:
        """Record launch phases (seconds; see core.timings) with those already kept."""
        with self.tx() as db:
            old = self._get(db, session_id)
            new = old.with_(timings={**old.timings, **timings})
            self._write(db, new)
        return new

    def prune_history(self, max_age: float, max_count: int, now: float | None = None) -> int:
        """Forget ended (TERMINATED, CANCELLED) sessions older than ``max_age`` seconds
        or beyond the newest ``max_count`` of them (0: no limit); how many went."""
        now = time.time() if now is None else now
        final = status_in(state.FINAL)
        with self.tx() as db:
            order = "ORDER BY ended_at DESC, rowid DESC"
            rows = db.execute(f"SELECT id, ended_at FROM sessions WHERE {final} {order}").fetchall()
            doomed = [
                sid
                for i, (sid, ended) in enumerate(rows)
                if (max_age and (ended or 0) < now - max_age) or (max_count and i >= max_count)
            ]
            for sid in doomed:
                for table in ("keys", "containers"):
                    db.execute(f"DELETE FROM {table} WHERE session_id = ?", (sid,))
                db.execute("DELETE FROM sessions WHERE id = ?", (sid,))
        return len(doomed)

    def delete_session(self, session_id: str) -> None:
        """Remove a session, its containers and its keys (no error if absent)."""
        with self.tx() as db:
            db.execute("DELETE FROM keys WHERE session_id = ?", (session_id,))
            db.execute("DELETE FROM containers WHERE session_id = ?", (session_id,))
            db.execute("DELETE FROM sessions WHERE id = ?", (session_id,))
