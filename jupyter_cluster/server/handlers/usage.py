"""REST handler of usage accounting: ``GET usage?user=&since=&until=``.

The CPU-, memory- and GPU-hours sessions were allocated in a period (see
:mod:`jupyter_cluster.core.usage` for what counts), per user and per session, from
the engine's sessions and their history. Admins (and every client of a single-user
server) see everyone's or any one user's; other users only their own (403 when
they ask for someone else's). The CLI's ``jupyter cluster usage`` prints the same.
"""

from __future__ import annotations

import time

from jupyter_server.auth.decorator import authorized
from tornado import web

from ...core.usage import parse_period, report
from .base import API, ClusterHandler


class UsageHandler(ClusterHandler):
    """Allocated resource-hours per user and per session in a period."""

    @web.authenticated
    @authorized
    async def get(self) -> None:
        since, until = parse_period(
            self.get_argument("since", None), self.get_argument("until", None)
        )
        user = self.get_argument("user", None) or None
        if not self.sees_all:
            if user not in (None, self.owner):
                raise web.HTTPError(403, "only admins see other users' usage")
            user = self.owner
        sessions = await self.service.engine.list(include_ended=True)
        if user is not None:
            sessions = [s for s in sessions if s.owner == user]
        self.reply(report(sessions, time.time(), since, until))


#: (pattern, handler class) of this module's routes, relative to the base URL.
default_handlers = [(f"{API}/usage", UsageHandler)]
