"""REST handlers of resource policies: ``GET limits``, ``GET/PUT/DELETE limits/{kind}/{name}``.

``GET limits`` is the caller's own policy (resolved with their Hub groups, see
:mod:`jupyter_cluster.core.resource_policies`), where it comes from and what they
hold now. The ``limits/users/NAME`` and ``limits/groups/NAME`` routes are for admins
only (403 otherwise): read an entry (configured, changed at run time, effective),
change it at run time (``PUT``: the keys given replace the earlier run-time change
and win over the configured entry) or drop the run-time change (``DELETE``). Each
change is recorded in the audit log (``policy_set``, ``policy_remove``). On a
user's server in team mode the shared service answers: the request is passed on
with the user's token. The CLI's ``jupyter cluster limits`` uses these routes in
team mode.
"""

from __future__ import annotations

from typing import Any

from jupyter_server.auth.decorator import authorized
from tornado import web

from ...core.resource_policies import held_by
from ...engine.admission import LocalGate
from ...errors import NotFound
from .base import API, ClusterHandler


class LimitsBase(ClusterHandler):
    """Shared: passing a request on to the shared service (team mode)."""

    async def passed_on(self, method: str, path: str, body: Any = None) -> bool:
        """Answer with the shared service's reply when its policy applies here."""
        if self.service.gate.resource_policy(self.owner, self.user_groups) is not None:
            return False
        http = getattr(self.service.engine, "http", None)
        if http is None:
            raise NotFound("this server resolves no resource policies")
        data = await http.call(method, path, body)
        if data is None:
            self.set_status(204)
            self.finish()
        else:
            self.reply(data)
        return True


class LimitsHandler(LimitsBase):
    """The caller's effective resource policy and what they hold now."""

    @web.authenticated
    @authorized
    async def get(self) -> None:
        if await self.passed_on("GET", "limits"):
            return
        resolved = self.service.gate.resource_policy(self.owner, self.user_groups)
        assert resolved is not None
        sessions = await self.service.engine.list()
        self.reply(
            {
                "user": self.owner,
                "groups": self.user_groups,
                "source": resolved.source,
                "limits": resolved.policy.to_dict(),
                "held": held_by(sessions, self.owner),
            }
        )


class LimitEntryHandler(LimitsBase):
    """One user's or group's policy entry (admins)."""

    def local_gate(self) -> LocalGate:
        """This server's own gate (its policy applies: not passed on)."""
        gate = self.service.gate
        assert isinstance(gate, LocalGate)
        return gate

    @staticmethod
    def known(kind: str) -> None:
        """NotFound (JSON, as every error here) for a kind but users and groups."""
        if kind not in ("users", "groups"):
            raise NotFound(f"no limits of {kind!r}: use limits/users/NAME or limits/groups/NAME")

    def admin_only(self) -> None:
        if not self.sees_all:
            raise web.HTTPError(403, "only admins read or change other users' limits")

    @web.authenticated
    @authorized
    async def get(self, kind: str, name: str) -> None:
        self.known(kind)
        if await self.passed_on("GET", f"limits/{kind}/{name}"):
            return
        self.admin_only()
        self.reply(self.local_gate().limits_entry(kind, name))

    @web.authenticated
    @authorized
    async def put(self, kind: str, name: str) -> None:
        self.known(kind)
        body = self.json_body()
        if await self.passed_on("PUT", f"limits/{kind}/{name}", body):
            return
        self.admin_only()
        entry = self.local_gate().set_limits(kind, name, body)
        self.audit_details = {"kind": kind, "name": name, "limits": dict(body)}
        self.reply(entry)

    @web.authenticated
    @authorized
    async def delete(self, kind: str, name: str) -> None:
        self.known(kind)
        if await self.passed_on("DELETE", f"limits/{kind}/{name}"):
            return
        self.admin_only()
        self.local_gate().remove_limits(kind, name)
        self.audit_details = {"kind": kind, "name": name}
        self.set_status(204)
        self.finish()


#: (pattern, handler class) of this module's routes, relative to the base URL.
default_handlers = [
    (f"{API}/limits", LimitsHandler),
    (f"{API}/limits/(?P<kind>[^/]+)/(?P<name>[^/]+)", LimitEntryHandler),
]
