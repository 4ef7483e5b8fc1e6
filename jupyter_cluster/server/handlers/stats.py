"""REST handler of a session's resource use: ``GET sessions/{ref}/stats``.

One sample of every container's CPU, memory, network and block IO, and GPUs for a
container given some (what the CLI's ``top --json`` and ``%cluster top`` show), or
with ``?follow=1`` a Server-Sent Events stream of samples (``event: stats``) every
``ClusterApp.stats_interval`` seconds for as long as the client listens, read once
per interval for all the session's followers (:mod:`..stats_feed`): nothing is
read from the agents when nobody watches. The sidebar's graphs use the stream.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from jupyter_server.auth.decorator import authorized
from tornado import web
from tornado.iostream import StreamClosedError

from ..stats_feed import feeds_of
from .base import API, ClusterHandler


async def read_sample(service: Any, session_id: str) -> dict[str, Any]:
    """One sample of the session as the API sends it (the service's manager reads it)."""
    found = await service.engine.stats(session_id)
    hosts = {h: (u.to_dict() if u is not None else None) for h, u in found.items()}
    return {"session_id": session_id, "time": time.time(), "hosts": hosts}


class StatsHandler(ClusterHandler):
    """A session's resource use: one sample, or a stream of them."""

    _closed: asyncio.Event | None = None

    @property
    def closed(self) -> asyncio.Event:
        """Set when the client has gone away."""
        if self._closed is None:
            self._closed = asyncio.Event()
        return self._closed

    @web.authenticated
    @authorized
    async def get(self, ref: str) -> None:
        session = await self.session(ref)
        if not self.flag("follow"):
            self.reply(await read_sample(self.service, session.id))
            return
        first = await read_sample(
            self.service, session.id
        )  # errors (not running) before the stream
        self.service.streams.take(self.owner)  # TooMany (429) before anything is sent
        try:
            await self._follow(session.id, first)
        finally:
            self.service.streams.release(self.owner)

    async def _follow(self, session_id: str, first: dict[str, Any]) -> None:
        """Send ``first``, then a sample every ``stats_interval`` s until the client
        leaves or the session ends."""
        self.set_header("Content-Type", "text/event-stream")
        self.set_header("Cache-Control", "no-cache")
        self.set_header("X-Accel-Buffering", "no")
        service, interval = self.service, self.service.host.stats_interval
        feed, seen = feeds_of(service).follow(
            session_id, lambda: read_sample(service, session_id), interval
        )
        sample: dict[str, Any] | None = first
        try:
            while sample is not None:
                self.write(f"event: stats\ndata: {json.dumps(sample)}\n\n")
                await self.flush()
                found = await feed.next(seen, self.closed)
                seen, sample = found if found is not None else (seen, None)
        except StreamClosedError:
            return
        except Exception as exc:  # the session ended meanwhile: say so, then end
            self.write(f"event: end\ndata: {json.dumps({'message': str(exc)})}\n\n")
        finally:
            feed.leave()
        if not self.closed.is_set():
            self.finish()

    def on_connection_close(self) -> None:
        self.closed.set()
        super().on_connection_close()


#: (pattern, handler class) of this module's routes, relative to the base URL.
default_handlers = [(f"{API}/sessions/(?P<ref>[^/]+)/stats", StatsHandler)]
