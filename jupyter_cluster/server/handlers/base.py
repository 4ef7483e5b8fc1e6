"""The base class of the REST handlers: service access, JSON in and out, error mapping.

Every route lives under ``{base_url}cluster/api/`` and every handler method is
decorated with ``@web.authenticated`` and ``@authorized`` on the auth resource
``cluster`` (a test fails if one is not). Errors are JSON
``{"message": …, "field": …}``: :class:`~jupyter_cluster.errors.InvalidRequest`
→ 400 (``field`` names the input), NotFound → 404, Conflict → 409, agent and
Docker failures → 502. Input never causes a 500.

The handlers are split by topic, each module with its own ``default_handlers``:
:mod:`.sessions` (sessions, logs, terminals) and :mod:`.info` (agents, groups,
images, launch options, events, the OpenAPI document).
"""

from __future__ import annotations

import json
from http.client import responses
from typing import Any

from jupyter_server.auth.identity import (
    IdentityProvider,
    LegacyIdentityProvider,
    PasswordIdentityProvider,
)
from jupyter_server.base.handlers import APIHandler, JupyterHandler
from jupyter_server.utils import url_path_join

from ...config import local_owner
from ...core.models import Session
from ...errors import (
    AgentError,
    ClusterError,
    Conflict,
    Forbidden,
    InvalidRequest,
    NotFound,
    TooMany,
)
from .. import audit
from ..service import SERVICE_SETTING, ClusterService

AUTH_RESOURCE = "cluster"
API = "cluster/api"
_SINGLE_USER = (IdentityProvider, PasswordIdentityProvider, LegacyIdentityProvider)
_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off")


def status_for(exc: ClusterError) -> int:
    """The HTTP status of an engine error."""
    if isinstance(exc, InvalidRequest):
        return 400
    if isinstance(exc, NotFound):
        return 404
    if isinstance(exc, Conflict):
        return 409
    if isinstance(exc, Forbidden):
        return 403  # the shared service's refusal, passed on by a user's server
    if isinstance(exc, TooMany):
        return 429
    return 502  # AgentError, LaunchFailed, a failed clean-up: Docker's side failed


class SessionScope(JupyterHandler):
    """Who the client is and which sessions it may see: shared by the REST handlers and
    the app proxy (:mod:`.proxy`)."""

    @property
    def service(self) -> ClusterService:
        """The extension's service (put in the web app's settings by ClusterApp)."""
        service: ClusterService = self.settings[SERVICE_SETTING]
        return service

    @property
    def owner(self) -> str:
        """Who a new session belongs to (``max_sessions_per_user`` counts by it).

        The stock identity providers of a single-user server name every token or
        password client a fresh anonymous user: their sessions are the server
        owner's, as the CLI records them. Other providers (e.g. JupyterHub's)
        name real users.
        """
        if type(self.identity_provider) in _SINGLE_USER:
            return local_owner()
        return str(getattr(self.current_user, "username", "") or "")

    @property
    def user_groups(self) -> list[str]:
        """The client's JupyterHub groups (which launch profiles it sees); none
        without a Hub."""
        hub_user = getattr(self.current_user, "hub_user", None) or {}
        return [str(g) for g in hub_user.get("groups") or ()]

    @property
    def sees_all(self) -> bool:
        """Whether this client sees and acts on every session: always on a single-user
        server (its clients are all its owner), else admins (``ClusterApp.admin_users``
        and JupyterHub admins)."""
        if type(self.identity_provider) in _SINGLE_USER:
            return True
        user = self.current_user
        hub_user = getattr(user, "hub_user", None) or {}
        groups = set(hub_user.get("groups") or ()) & set(self.service.host.admin_groups)
        return bool(hub_user.get("admin") or groups) or self.owner in self.service.host.admin_users

    def may_see(self, session: Session) -> bool:
        """Whether ``session`` is this client's (or the client sees all)."""
        return self.sees_all or session.owner == self.owner

    async def session(self, ref: str) -> Session:
        """The session ``ref`` names, if this client may see it; NotFound otherwise
        (another user's session is not even said to exist)."""
        session = await self.service.engine.get(ref, None if self.sees_all else self.owner)
        if not self.may_see(session):
            raise NotFound(f"no cluster session matches {ref!r}")
        self.audit_session = session  # what the audit log names (..audit)
        return session


class ClusterHandler(SessionScope, APIHandler):
    """Base of every cluster handler: service access, JSON in and out, error mapping."""

    auth_resource = AUTH_RESOURCE

    async def prepare(self) -> None:  # type: ignore[override]
        await super().prepare()
        await self.service.ensure_started()

    def on_finish(self) -> None:
        """Record an audited request (launch, terminate, terminal, keys, folders)."""
        audit.record(self)

    def api_url(self, *parts: str) -> str:
        return url_path_join(self.base_url, API, *parts)

    def reply(self, data: Any, status: int = 200) -> None:
        self.replied = data  # for the audit log (..audit), read as the request finishes
        self.set_status(status)
        self.finish(json.dumps(data))

    def json_body(self) -> Any:
        """The request body as JSON; InvalidRequest (field ``body``) when it is not."""
        if not self.request.body:
            raise InvalidRequest("body: send a JSON object (the body was empty)", "body")
        try:
            return json.loads(self.request.body)
        except (ValueError, RecursionError) as exc:
            raise InvalidRequest(f"body: malformed JSON: {exc}", "body") from None

    def flag(self, name: str) -> bool:
        """A boolean query argument (1/0, true/false, yes/no)."""
        raw = self.get_argument(name, None)
        if raw is None:
            return False
        value = raw.strip().lower()
        if value in _TRUE:
            return True
        if value in _FALSE:
            return False
        raise InvalidRequest(f"{name}: expected 1 or 0 (true or false), got {value!r}", name)

    def whole(self, name: str) -> int | None:
        """A non-negative whole-number query argument, or None when absent."""
        value = self.get_argument(name, None)
        if value is None:
            return None
        if not value.isascii() or not value.isdigit():
            raise InvalidRequest(f"{name}: expected a whole number, got {value!r}", name)
        digits = value.lstrip("0")
        return int(digits or "0") if len(digits) <= 12 else 10**12

    # -- errors ------------------------------------------------------------------

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        if status_code == 405:
            allowed = [m for m in ("GET", "POST", "DELETE") if m.lower() in vars(type(self))]
            self.set_header("Allow", ", ".join(allowed))
        exc_info = kwargs.get("exc_info")
        exc = exc_info[1] if exc_info else None
        if isinstance(exc, ClusterError):
            status_code = status_for(exc)
            self.set_status(status_code)
            reply = {
                "message": exc.message,
                "reason": responses.get(status_code, ""),
                "field": getattr(exc, "field", None),
            }
            if isinstance(exc, AgentError):
                reply["agent"] = exc.agent
            self.set_header("Content-Type", "application/json")
            self.finish(json.dumps(reply))
            return
        super().write_error(status_code, **kwargs)

    def log_exception(self, typ: Any, value: Any, tb: Any) -> None:
        if isinstance(value, ClusterError):
            self.log.warning("%s %s: %s", self.request.method, self.request.path, value)
            return
        super().log_exception(typ, value, tb)
