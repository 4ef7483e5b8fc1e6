"""REST handlers of agents, resource groups, images, launch options, events, OpenAPI.

``GET me`` (who the caller is and whether it administers the cluster: the Lab shows
its admin view only when it does), ``GET agents`` (capacity, allocated, free per
agent), ``GET resource-groups``
(the same summed per group), ``GET images`` (the allow-list), ``GET
launch-options`` (the launch form, see :mod:`.launch_options`), ``GET events``
(Server-Sent Events of session and container status changes, see
:mod:`.events`) and ``GET openapi.json`` (the API description shipped in the
package, with this server's base URL).
"""

from __future__ import annotations

import asyncio
import json
from importlib.resources import files
from typing import Any

from jupyter_server.auth.decorator import authorized
from tornado import web
from tornado.iostream import StreamClosedError

from ...asyncwait import within
from ..events import Event, Subscription
from .base import API, ClusterHandler

KEEPALIVE = 15.0


class MeHandler(ClusterHandler):
    """Who the caller is: ``{"name", "admin", "groups"}``. ``admin`` is
    :attr:`~.base.SessionScope.sees_all` (Hub admins, ``admin_users``, ``admin_groups``;
    every client of a single-user server, which administers its own sessions); the Lab
    reads it to offer the admin view, and the admin routes check it themselves."""

    @web.authenticated
    @authorized
    async def get(self) -> None:
        self.reply({"name": self.owner, "admin": self.sees_all, "groups": self.user_groups})


class AgentsHandler(ClusterHandler):
    """Every agent: group, reachability, capacity, allocated and free resources."""

    @web.authenticated
    @authorized
    async def get(self) -> None:
        self.reply(await self.service.engine.agents_info())


class ResourceGroupsHandler(ClusterHandler):
    """Resource groups with their agents' capacity, used and free resources summed."""

    @web.authenticated
    @authorized
    async def get(self) -> None:
        """Every allowed group, summed over its agents."""
        groups = self.service.gate.groups()  # none named: the service's own policy
        self.reply(await self.service.engine.resource_groups_info(groups))


class ImagesHandler(ClusterHandler):
    """The images users may launch, the default first, with where each is present."""

    @web.authenticated
    @authorized
    async def get(self) -> None:
        """The allowed images and which agents have each."""
        images = self.service.gate.images()  # none named: the service's own policy
        self.reply(await self.service.engine.images_info(images))


class LaunchOptionsHandler(ClusterHandler):
    """The launch form: fields, types, limits, defaults and choices."""

    @web.authenticated
    @authorized
    async def get(self) -> None:
        self.reply(await self.service.launch_options(self.owner, self.user_groups))


def sse(event: str, data: Any, event_id: int | None = None) -> str:
    """One Server-Sent Events message."""
    head = f"id: {event_id}\n" if event_id is not None else ""
    return f"{head}event: {event}\ndata: {json.dumps(data)}\n\n"


class EventsHandler(ClusterHandler):
    """Server-Sent Events: a ``snapshot`` of the active sessions, then ``session`` and
    ``container`` events as statuses change, and a comment every 15 s."""

    _sub: Subscription | None = None

    @web.authenticated
    @authorized
    async def get(self) -> None:
        hub = self.service.hub
        self.set_header("Content-Type", "text/event-stream")
        self.set_header("Cache-Control", "no-cache")
        self.set_header("X-Accel-Buffering", "no")
        sessions = await self.service.engine.list()
        self._sub = sub = hub.subscribe()
        try:
            mine = self.service.models(s for s in sessions if self.may_see(s))
            snapshot = {"type": "snapshot", "sessions": mine}
            self.write(sse("snapshot", snapshot))
            await self.flush()
            while True:
                try:
                    event: Event | None = await within(sub.queue.get(), KEEPALIVE)
                except asyncio.TimeoutError:
                    self.write(": keepalive\n\n")
                    await self.flush()
                    continue
                if event is None:
                    break
                if not (self.sees_all or event.get("owner") == self.owner):
                    continue  # never another user's session
                self.write(sse(event["type"], event, event["id"]))
                await self.flush()
        except StreamClosedError:
            return
        finally:
            hub.unsubscribe(sub)
        self.finish(set_content_type="text/event-stream")

    def on_connection_close(self) -> None:
        if self._sub is not None:
            self._sub.close()
        super().on_connection_close()


class OpenAPIHandler(ClusterHandler):
    """The OpenAPI document of this API (shipped in the package)."""

    @web.authenticated
    @authorized
    async def get(self) -> None:
        document = json.loads(files("jupyter_cluster.server").joinpath("openapi.json").read_text())
        document["servers"] = [{"url": self.base_url.rstrip("/") + "/" + API}]
        self.service.gate.narrow(document, self.owner)  # team mode: the service's own
        self.reply(document)


#: (pattern, handler class) of this module's routes, relative to the base URL.
default_handlers = [
    (f"{API}/me", MeHandler),
    (f"{API}/agents", AgentsHandler),
    (f"{API}/resource-groups", ResourceGroupsHandler),
    (f"{API}/images", ImagesHandler),
    (f"{API}/launch-options", LaunchOptionsHandler),
    (f"{API}/events", EventsHandler),
    (rf"{API}/openapi\.json", OpenAPIHandler),
]
