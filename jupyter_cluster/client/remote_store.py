"""The store as the server extension reads it in team mode: the shared service's
sessions for this user, over REST (:class:`RemoteStore`, the ``store`` of a
:class:`~.remote_engine.RemoteEngine`)."""

from __future__ import annotations

import builtins

from ..core.models import Session
from ..errors import NotFound
from .http import ServiceHTTP
from .remote_owned import ref_path


class RemoteStore:
    """The blocking reads the server extension makes of a store, over REST.

    Called from worker threads (the events poller) and at start and stop.
    """

    def __init__(self, http: ServiceHTTP) -> None:
        self.http = http

    def list(self, include_ended: bool = False) -> builtins.list[Session]:
        """The caller's active sessions (all of them with history when asked)."""
        path = "sessions?all=1" if include_ended else "sessions"
        return [Session.from_public(s) for s in self.http.call_sync("GET", path)]

    def get(self, session_id: str) -> Session | None:
        """One session by id, or None when the service does not know it (for this user)."""
        try:
            found = self.http.call_sync("GET", f"sessions/{ref_path(session_id)}")
            return Session.from_public(found)
        except NotFound:
            return None
