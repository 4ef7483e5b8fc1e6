"""REST handlers of agents, resource groups, images, launch options, events, OpenAPI.

``GET agents`` (capacity, allocated, free per agent), ``GET resource-groups``
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

from ...core.policy import LaunchPolicy
from ...core.resources import MIN_MEM
from ..events import Event, Subscription
from .base import API, ClusterHandler

KEEPALIVE = 15.0


class AgentsHandler(ClusterHandler):
    """Every agent: group, reachability, capacity, allocated and free resources."""

    @web.authenticated
    @authorized
    async def get(self) -> None:
        self.reply(await self.service.manager.agents_info())


class ResourceGroupsHandler(ClusterHandler):
    """Resource groups with their agents' capacity, used and free resources summed."""

    @web.authenticated
    @authorized
    async def get(self) -> None:
        """Every allowed group, summed over its agents."""
        remote = self.service.manager.remote  # the service applies its own policy
        groups = () if remote else self.service.policy().resource_groups
        self.reply(await self.service.manager.resource_groups_info(groups))


class ImagesHandler(ClusterHandler):
    """The images users may launch, the default first, with where each is present."""

    @web.authenticated
    @authorized
    async def get(self) -> None:
        """The allowed images and which agents have each."""
        images = () if self.service.manager.remote else self.service.policy().images
        self.reply(await self.service.manager.images_info(images))


class LaunchOptionsHandler(ClusterHandler):
    """The launch form: fields, types, limits, defaults and choices."""

    @web.authenticated
    @authorized
    async def get(self) -> None:
        self.reply(await self.service.launch_options(self.owner))


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
        sessions = await self.service.manager.list()
        self._sub = sub = hub.subscribe()
        try:
            mine = [self.service.model(s) for s in sessions if self.may_see(s)]
            snapshot = {"type": "snapshot", "sessions": mine}
            self.write(sse("snapshot", snapshot))
            await self.flush()
            while True:
                try:
                    event: Event | None = await asyncio.wait_for(sub.queue.get(), KEEPALIVE)
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
        if not self.service.manager.remote:  # else the service's document has them
            with_policy(document, self.service.policy(self.owner))
        self.reply(document)


def with_policy(document: dict[str, Any], policy: LaunchPolicy) -> None:
    """Narrow the launch request schema to this server's images, groups, folders, limits."""
    props = document["components"]["schemas"]["LaunchRequest"]["properties"]
    props["image"]["enum"] = list(policy.images)
    props["resource_group"]["enum"] = list(policy.resource_groups)
    props["size"]["maximum"] = policy.max_size
    props["gpu"]["maximum"] = policy.max_gpu
    props["cpu"]["oneOf"][0]["maximum"] = policy.max_cpu
    props["mem"]["oneOf"][0].update(minimum=MIN_MEM, maximum=policy.max_mem)
    props["shm"]["oneOf"][0].update(minimum=1, maximum=policy.max_shm)
    folders = [f"{name}{flag}" for name in policy.folders for flag in ("", ":ro", ":rw")]
    if folders:
        props["mounts"]["items"]["enum"] = folders
    else:
        props["mounts"]["maxItems"] = 0


#: (pattern, handler class) of this module's routes, relative to the base URL.
default_handlers = [
    (f"{API}/agents", AgentsHandler),
    (f"{API}/resource-groups", ResourceGroupsHandler),
    (f"{API}/images", ImagesHandler),
    (f"{API}/launch-options", LaunchOptionsHandler),
    (f"{API}/events", EventsHandler),
    (rf"{API}/openapi\.json", OpenAPIHandler),
]
