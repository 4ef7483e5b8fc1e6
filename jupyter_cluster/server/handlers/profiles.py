"""REST handlers of users' own launch profiles: ``GET profiles``, ``PUT/DELETE profiles/{name}``.

Every client acts on its own profiles only (another user's are not even said to
exist); the site's profiles are configured (``c.ClusterApp.launch_profiles``) and
``GET launch-options`` lists both. A launch names one in its ``profile`` field. The
CLI's ``profile`` commands use these routes in team mode.
"""

from __future__ import annotations

from jupyter_server.auth.decorator import authorized
from tornado import web

from ...core.profiles import check_values, make_profile
from ...errors import InvalidRequest
from .base import API, ClusterHandler


class ProfilesHandler(ClusterHandler):
    """List this user's launch profiles."""

    @web.authenticated
    @authorized
    async def get(self) -> None:
        profiles = await self.service.engine.list_profiles(self.owner)
        self.reply([p.to_dict() for p in profiles])


class ProfileHandler(ClusterHandler):
    """Save (create or replace) or delete one of this user's launch profiles."""

    @web.authenticated
    @authorized
    async def put(self, name: str) -> None:
        body = self.json_body()
        if isinstance(body, dict) and "groups" in body:
            raise InvalidRequest("groups: only the site's profiles are for Hub groups", "groups")
        profile = check_values(make_profile(name, body))
        await self.service.engine.save_profile(profile, self.owner)
        self.reply(profile.to_dict())

    @web.authenticated
    @authorized
    async def delete(self, name: str) -> None:
        await self.service.engine.remove_profile(name, self.owner)
        self.set_status(204)
        self.finish()


#: (pattern, handler class) of this module's routes, relative to the base URL.
default_handlers = [
    (f"{API}/profiles", ProfilesHandler),
    (f"{API}/profiles/(?P<name>[^/]+)", ProfileHandler),
]
