"""Time limits: sessions past their maximum lifetime are ended, with a warning first.

A session's limit is its ``max_lifetime`` or else the site's
``ClusterManager.max_session_lifetime``, counted from its launch (time waiting in
the queue included). :class:`LifetimeWatch` checks sessions against it
(:func:`~jupyter_cluster.core.time_limits.lifetime_due`): within the last 60 s (or the
last 10 % of a short limit) a running session's status reason says when it will
end, which the events stream carries as a warning; at the limit it is terminated
with the reason "reached its maximum lifetime of …" (a batch job's result says it
was stopped). The manager's :meth:`refresh` sweeps every session (so every CLI
command and a server's reconciliation enforce limits), a server's batch upkeep
sweeps every second or so, and a batch job's runner checks its own session at each poll.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable

from ..core.models import Session
from ..core.state import USABLE, SessionStatus
from ..core.time_limits import (
    WARNING_PREFIX,
    effective_lifetime,
    lifetime_due,
    lifetime_reason,
    warning_reason,
)
from ..errors import ClusterError
from .store.jobs import change_job, set_reason
from .store.sessions import Store

log = logging.getLogger(__name__)
#: Sessions in these states are held to their limit (others are ending or ended).
WATCHED = USABLE | {SessionStatus.PENDING}
Terminate = Callable[[str, str], Awaitable[Session]]


class LifetimeWatch:
    """Ends sessions of ``store`` past their limit through ``terminate`` (the
    manager's); ``site_limit()`` is the site's limit in seconds (0: none)."""

    def __init__(
        self,
        store: Store,
        terminate: Terminate,
        site_limit: Callable[[], float],
        logger: logging.Logger | None = None,
    ) -> None:
        self.store = store
        self.terminate = terminate
        self.site_limit = site_limit
        self.log = logger or log

    async def sweep(self, now: float | None = None) -> int:
        """Check every session; how many were ended."""
        ended = 0
        for session in self.store.list():
            if await self.check(session, now) is not None:
                ended += 1
        return ended

    async def check(self, session: Session, now: float | None = None) -> Session | None:
        """Warn or end ``session`` as its limit says; the ended session, else None."""
        if session.status not in WATCHED:
            return None
        limit = effective_lifetime(session.spec.max_lifetime, self.site_limit())
        now = time.time() if now is None else now
        due = lifetime_due(session.created_at, limit, now)
        if not due or limit is None:
            return None
        if due == "warn":
            reason = warning_reason(limit, session.created_at + limit)
            warned = set_reason(
                self.store,
                session.id,
                reason,
                lambda s: (
                    s.status in USABLE
                    and (not s.status_reason or s.status_reason.startswith(WARNING_PREFIX))
                ),
            )
            if warned:
                self.log.warning("session %s %s", session.name, reason)
            return None
        reason = lifetime_reason(limit)
        self.log.warning("session %s %s: terminating it", session.name, reason)
        if session.spec.command:
            change_job(self.store, session.id, lambda job: job.stopped(reason, now))
        try:
            return await self.terminate(session.id, reason)
        except ClusterError as exc:  # another process may be ending it too
            self.log.warning("could not end session %s at its lifetime: %s", session.name, exc)
            return self.store.get(session.id)
