"""REST handler of a session's resource use: ``GET sessions/{ref}/stats``.

One sample of every container's CPU, memory, network and block IO (what the CLI's
``top --json`` and ``%cluster top`` show), or with ``?follow=1`` a Server-Sent
Events stream of samples (``event: stats``) every ``ClusterApp.stats_interval``
seconds for as long as the client listens: nothing is read from the agents when
nobody watches. The sidebar's graphs use the stream.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from jupyter_server.auth.decorator import authorized
from tornado import web
from tornado.iostream import StreamClosedError

from .base import API, ClusterHandler


class StatsHandler(ClusterHandler):
    """A session's resource use: one sample, or a stream of them."""

    _gone = False

    async def sample(self, session_id: str) -> dict[str, Any]:
        found = await self.service.manager.stats(session_id)
        hosts = {h: (u.to_dict() if u is not None else None) for h, u in found.items()}
        return {"session_id": session_id, "time": time.time(), "hosts": hosts}

    @web.authenticated
    @authorized
    async def get(self, ref: str) -> None:
        session = await self.session(ref)
        if not self.flag("follow"):
            self.reply(await self.sample(session.id))
            return
        first = await self.sample(session.id)  # errors (not running) before the stream
        self.set_header("Content-Type", "text/event-stream")
        self.set_header("Cache-Control", "no-cache")
        self.set_header("X-Accel-Buffering", "no")
        interval = self.service.host.stats_interval
        sample: dict[str, Any] | None = first
        self.service.active_streams += 1
        try:
            while not self._gone:
                if sample is None:
                    started = time.monotonic()
                    sample = await self.sample(session.id)
                    await asyncio.sleep(max(interval - (time.monotonic() - started), 0))
                self.write(f"event: stats\ndata: {json.dumps(sample)}\n\n")
                await self.flush()
                sample = None
                if self._gone:
                    break
        except StreamClosedError:
            return
        except Exception as exc:  # the session ended meanwhile: say so, then end
            self.write(f"event: end\ndata: {json.dumps({'message': str(exc)})}\n\n")
        finally:
            self.service.active_streams -= 1
        if not self._gone:
            self.finish()

    def on_connection_close(self) -> None:
        self._gone = True
        super().on_connection_close()


#: (pattern, handler class) of this module's routes, relative to the base URL.
default_handlers = [(f"{API}/sessions/(?P<ref>[^/]+)/stats", StatsHandler)]
