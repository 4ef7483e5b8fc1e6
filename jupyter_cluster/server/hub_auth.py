"""Who calls the shared service, and what they may reach: JupyterHub tokens, cluster routes only.

Used by ``jupyter cluster serve`` (:mod:`.serve`), the server extension running as
a JupyterHub service. :class:`HubTokenIdentityProvider` makes a request's user the
Hub user of the token it carries (``Authorization: token …``; a user's server
sends its own ``JUPYTERHUB_API_TOKEN``), through JupyterHub's ``HubAuth``: the
token must hold the service's access scope (``access:services!service=cluster``).
The user's admin flag and groups are read with the service's own token (its role
needs ``read:users``), so admins see every session. :class:`ClusterOnlyAuthorizer`
lets a Hub user reach the cluster routes and nothing else of the server
(no kernels, contents, terminals or files of the service's own machine).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any

import httpx
from jupyter_server.auth.authorizer import Authorizer
from jupyter_server.auth.decorator import allow_unauthenticated
from jupyter_server.auth.identity import IdentityProvider, User
from jupyter_server.base.handlers import JupyterHandler
from jupyter_server.utils import url_path_join
from traitlets import Any as AnyTrait
from traitlets import Float, default

from ..setting_bounds import bounded
from .handlers.base import AUTH_RESOURCE


@dataclass
class HubUser(User):
    """A Hub user as the cluster handlers see it: ``hub_user`` holds ``admin`` and
    ``groups`` (the handlers' ``sees_all`` reads it)."""

    hub_user: dict[str, Any] = field(default_factory=dict)


class HubTokenIdentityProvider(IdentityProvider):
    """Identify requests by their JupyterHub token (see the module docstring)."""

    cache_seconds = Float(
        60.0, config=True, help="Seconds a resolved token and a user's admin flag are cached."
    )
    hub_auth = AnyTrait(help="JupyterHub's HubAuth (made from the service's environment).")
    _hub_ages = bounded(0, "cache_seconds", unit="seconds")

    @default("hub_auth")
    def _default_hub_auth(self) -> Any:
        from jupyterhub.services.auth import HubAuth

        return HubAuth(cache_max_age=int(self.cache_seconds))

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._roles: dict[str, tuple[float, dict[str, Any]]] = {}

    @property
    def auth_enabled(self) -> bool:
        return True

    def get_handlers(self) -> list[Any]:
        """The login page only says to send a token (browsers and clients without one
        are sent there)."""
        return [(r"/login", NoLoginHandler)]

    def get_token(self, handler: Any) -> str | None:
        """The token of ``Authorization: token …`` (or ``Bearer``); no cookies, no URL."""
        header = handler.request.headers.get("Authorization", "")
        kind, _, token = header.partition(" ")
        if kind.lower() in ("token", "bearer") and token.strip():
            return token.strip()
        return None

    async def get_user(self, handler: Any) -> User | None:
        """The token's Hub user, if the token is valid and holds the access scope."""
        token = self.get_token(handler)
        if not token:
            return None
        auth = self.hub_auth
        model = await auth.user_for_token(token, sync=False)
        if not model or model.get("kind", "user") != "user" or not model.get("name"):
            return None
        if not auth.access_scopes:
            # Not run as a Hub service (JUPYTERHUB_SERVICE_NAME unset): any valid Hub
            # token would do, including tokens users never meant for this service.
            handler.log.warning(
                "cluster service: no access scope to check (JUPYTERHUB_SERVICE_NAME is not "
                "set: run it as a JupyterHub service); refusing %s's token",
                model["name"],
            )
            return None
        if not auth.check_scopes(auth.access_scopes, model):
            handler.log.warning(
                "cluster service: a token of %s lacks %s", model["name"], auth.access_scopes
            )
            return None
        name = str(model["name"])
        # A token in a header is not a browser's cookie: no XSRF check applies.
        handler._token_authenticated = True
        return HubUser(username=name, name=name, hub_user=await self._role(name, model))

    async def _role(self, name: str, model: dict[str, Any]) -> dict[str, Any]:
        """``admin`` and ``groups`` of ``name``: from the token's model when it says,
        else from the Hub with the service's token (cached)."""
        if "admin" in model and "groups" in model:
            return {"admin": bool(model["admin"]), "groups": list(model["groups"] or ())}
        cached = self._roles.get(name)
        if cached and cached[0] > time.monotonic():
            return cached[1]
        auth = self.hub_auth
        url = url_path_join(auth.api_url, "users", name)
        async with httpx.AsyncClient(timeout=10.0) as client:
            reply = await client.get(url, headers={"Authorization": f"token {auth.api_token}"})
        found = reply.json() if reply.status_code == 200 else {}
        role = {"admin": bool(found.get("admin")), "groups": list(found.get("groups") or ())}
        self._roles[name] = (time.monotonic() + self.cache_seconds, role)
        return role

    def validate_security(self, app: Any, ssl_options: Any = None) -> None:
        """Tokens are checked by the Hub: nothing of the server's own token applies."""


class NoLoginHandler(JupyterHandler):
    """403 with what to do: the service takes JupyterHub tokens, it has no log-in."""

    @allow_unauthenticated
    def get(self) -> None:
        self.set_status(403)
        self.set_header("Content-Type", "application/json")
        self.finish(
            json.dumps(
                {
                    "message": "the cluster service takes a JupyterHub token "
                    "(Authorization: token …) with the scope access:services!service=cluster; "
                    "use it through your own Jupyter server"
                }
            )
        )


class ClusterOnlyAuthorizer(Authorizer):
    """Allow the cluster routes (auth resource ``cluster``), deny every other."""

    def is_authorized(self, handler: Any, user: Any, action: str, resource: str) -> bool:
        return resource == AUTH_RESOURCE
