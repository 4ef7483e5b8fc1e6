"""REST handler of the audit log: ``GET audit?since=&actor=&action=&limit=``.

Admins only (``admin_users``, ``admin_groups``, Hub admins; every client of a
single-user server is its owner): 403 for anyone else. The records, oldest first,
are the newest ``limit`` (default 1000) matching; what is recorded, and what never
is (secrets), is in :mod:`jupyter_cluster.core.audit` and :mod:`..audit`. There is
no route to change or delete a record.
"""

from __future__ import annotations

from jupyter_server.auth.decorator import authorized
from tornado import web

from ...core.audit import ACTIONS
from ...core.usage import parse_time
from ...errors import InvalidRequest, NotFound
from ..audit import audit_log
from .base import API, ClusterHandler

MAX_LIMIT = 10000


class AuditHandler(ClusterHandler):
    """Read the audit log (admins)."""

    @web.authenticated
    @authorized
    async def get(self) -> None:
        if not self.sees_all:
            raise web.HTTPError(403, "only admins read the audit log")
        since = parse_time(self.get_argument("since", None), "since")
        action = self.get_argument("action", None)
        if action is not None and action not in ACTIONS:  # "" too: no such action
            raise InvalidRequest(f"action: one of {', '.join(ACTIONS)}, got {action!r}", "action")
        limit = self.whole("limit")
        limit = 1000 if limit is None else min(limit, MAX_LIMIT)
        actor = self.get_argument("actor", None) or None
        found = audit_log(self.service)
        if found is None:
            raise NotFound("this server keeps no audit log: the shared service it uses does")
        events = found.read(since, actor, action, limit)
        self.reply([e.to_dict() for e in events])


#: (pattern, handler class) of this module's routes, relative to the base URL.
default_handlers = [(f"{API}/audit", AuditHandler)]
