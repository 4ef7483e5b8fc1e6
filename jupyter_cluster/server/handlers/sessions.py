"""REST handlers of sessions, container logs and container terminals.

``GET/POST sessions``, ``GET/DELETE sessions/{ref}``,
``GET sessions/{ref}/containers/{host}/logs`` and
``POST sessions/{ref}/containers/{host}/terminals`` and ``GET sessions/{ref}/access``
(the owner's SSH access, used by users' servers in team mode). ``{ref}`` is a session id
(a name or a unique id prefix works too, as in the CLI). The work is done by
:class:`~jupyter_cluster.server.service.ClusterService` and the manager.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, AsyncIterator
from urllib.parse import urlencode

from jupyter_server.auth.decorator import authorized
from jupyter_server.utils import url_path_join
from tornado import web
from tornado.iostream import StreamClosedError

from ...asyncwait import ended
from ...core.state import ENDED, LISTINGS
from ...errors import InvalidRequest, TooMany
from .base import API, ClusterHandler

TEXT = "text/plain; charset=utf-8"
#: Characters of log text written before the handler waits for the client.
WRITE_CHUNK = 64 * 1024
#: Seconds a followed line may wait to be sent with the ones after it.
FLUSH_AFTER = 0.05
#: Most sessions one page of ``GET sessions?limit=`` holds.
MAX_PAGE = 500


class SessionsHandler(ClusterHandler):
    """List sessions (``?all=1`` with history; ``?limit=`` pages, newest first) or launch
    one (``?dry_run=1``: only say what the launch would meet now)."""

    @web.authenticated
    @authorized
    async def get(self) -> None:
        state, limit = self.listing(), self.whole("limit")
        before = self.get_argument("before", None)
        if limit is None:  # the whole listing, oldest first
            if before is not None:
                raise InvalidRequest("before: give it with limit (it names a page's end)", "before")
            sessions = await self.service.engine.list(include_ended=state != "active")
            if state == "ended":
                sessions = [s for s in sessions if s.status in ENDED]
            self.reply(self.service.models(s for s in sessions if self.may_see(s)))
            return
        if not 1 <= limit <= MAX_PAGE:
            raise InvalidRequest(f"limit: give 1 to {MAX_PAGE} sessions a page", "limit")
        owner = None if self.sees_all else self.owner
        found = await self.service.engine.page(state, limit + 1, before, owner)
        page = [s for s in found[:limit] if self.may_see(s)]
        if len(found) > limit and page:
            query = urlencode({"state": state, "limit": limit, "before": page[-1].id})
            self.set_header("Link", f'<{self.api_url("sessions")}?{query}>; rel="next"')
        self.reply(self.service.models(page))

    def listing(self) -> str:
        """``?state=`` (active, ended, all); ``?all=1`` is ``state=all``."""
        state = self.get_argument("state", None)
        if state is None:
            return "all" if self.flag("all") else "active"
        if state not in LISTINGS:
            raise InvalidRequest(f"state: give active, ended or all, not {state!r}", "state")
        if self.get_argument("all", None) is not None and self.flag("all") != (state == "all"):
            raise InvalidRequest("all: give either all=1 or state, not both", "all")
        return state

    @web.authenticated
    @authorized
    async def post(self) -> None:
        if self.flag("dry_run"):  # what the launch would meet now; nothing is made
            found = await self.service.check(self.json_body(), self.owner, self.user_groups)
            self.reply(found.to_dict())
            return
        session = await self.service.launch(self.json_body(), self.owner, self.user_groups)
        self.set_header("Location", self.api_url("sessions", session.id))
        self.reply(self.service.model(session), status=201)


class SessionHandler(ClusterHandler):
    """One session: read it, or terminate (cancel) it and shut its kernel down."""

    @web.authenticated
    @authorized
    async def get(self, ref: str) -> None:
        session = await self.session(ref)
        self.reply(self.service.model(session))

    @web.authenticated
    @authorized
    async def delete(self, ref: str) -> None:
        given = " ".join(self.get_argument("reason", "").split())  # one line
        reason = "".join(c for c in given if c.isprintable())[:200]
        await self.service.terminate((await self.session(ref)).id, reason=reason)
        self.set_status(204)
        self.finish()


class LogsHandler(ClusterHandler):
    """A container's log as text: ``?tail=N`` last lines, ``?follow=1`` keep streaming.

    A followed log streams new lines until the client goes away or the container
    ends.
    """

    _task: asyncio.Task[None] | None = None
    _gone = False

    @web.authenticated
    @authorized
    async def get(self, ref: str, host: str) -> None:
        tail, follow = self.whole("tail"), self.flag("follow")
        manager = self.service.engine
        session = await self.session(ref)
        manager.check_logs(session, host)  # errors before the stream starts
        lines: AsyncGenerator[str, None] = manager.logs(  # type: ignore[assignment]
            session.id, host, tail=tail, follow=follow
        )
        if not follow:  # streamed in pieces: a long log is never held whole
            try:
                with contextlib.suppress(StreamClosedError):
                    await self._pump(lines, flush_after=None)
                    self.finish(set_content_type=TEXT)
            finally:
                await lines.aclose()
            return
        try:
            self.service.streams.take(self.owner)  # TooMany (429) before anything is sent
        except TooMany:
            await lines.aclose()
            raise
        self.set_header("Content-Type", TEXT)
        self.set_header("Cache-Control", "no-cache")
        self.set_header("X-Accel-Buffering", "no")
        try:
            await self.flush()
            self._task = asyncio.ensure_future(self._pump(lines))
            with contextlib.suppress(StreamClosedError):
                await ended(self._task)  # the client's leaving cancels it
        except StreamClosedError:
            pass
        finally:
            self.service.streams.release(self.owner)
            await lines.aclose()
        if not self._gone:
            with contextlib.suppress(StreamClosedError):
                self.finish(set_content_type=TEXT)

    async def _pump(
        self, lines: AsyncIterator[str], flush_after: float | None = FLUSH_AFTER
    ) -> None:
        """Write ``lines`` to the client, flushing every ``WRITE_CHUNK`` characters
        (waiting for the client: that bounds what the server buffers) and, when
        following, ``flush_after`` seconds after a line that is not yet sent."""
        buffered = 0
        timer: asyncio.TimerHandle | None = None
        loop = asyncio.get_running_loop()

        def timed_flush() -> None:
            nonlocal timer, buffered
            timer, buffered = None, 0
            with contextlib.suppress(StreamClosedError):
                self.flush().add_done_callback(lambda f: f.exception())

        try:
            async for line in lines:
                self.write(line)
                buffered += len(line)
                if buffered >= WRITE_CHUNK:
                    if timer is not None:
                        timer.cancel()
                        timer = None
                    buffered = 0
                    await self.flush()
                elif flush_after is not None and timer is None:
                    timer = loop.call_later(flush_after, timed_flush)
        finally:
            if timer is not None:
                timer.cancel()
        if buffered and flush_after is not None:
            await self.flush()

    def on_connection_close(self) -> None:
        self._gone = True
        if self._task is not None:
            self._task.cancel()
        super().on_connection_close()


class TerminalsHandler(ClusterHandler):
    """Open a terminal of the server's terminal service in one container, as work."""

    @web.authenticated
    @authorized
    async def post(self, ref: str, host: str) -> None:
        session = await self.session(ref)  # another user's session: 404 first
        term_manager = self.service.terminal_manager
        if term_manager is None and not self.service.host.kernels_here:
            raise web.HTTPError(
                503, "the shared service opens no terminals; open them from your own server"
            )
        if term_manager is None:
            raise web.HTTPError(503, "terminals are disabled on this server")
        model = await self.service.terminals.create(term_manager, session, host)
        self.set_header("Location", url_path_join(self.base_url, "api/terminals", model["name"]))
        self.reply({**model, "session_id": session.id, "host": host}, status=201)


class AccessHandler(ClusterHandler):
    """main1's SSH endpoint and the session's keys, for the session's owner only.

    In team mode the owner's own server opens terminals, runs ``exec`` and the
    kernel over SSH with them; nobody else gets them, admins included (403).
    """

    @web.authenticated
    @authorized
    async def get(self, ref: str) -> None:
        session = await self.session(ref)
        if session.owner != self.owner:
            raise web.HTTPError(403, "only the session's owner gets its keys")
        self.set_header("Cache-Control", "no-store")
        self.reply((await self.service.engine.access(session.id)).to_dict())


_REF, _HOST = r"(?P<ref>[^/]+)", r"(?P<host>[^/]+)"
#: (pattern, handler class) of this module's routes, relative to the base URL.
default_handlers = [
    (f"{API}/sessions", SessionsHandler),
    (f"{API}/sessions/{_REF}", SessionHandler),
    (f"{API}/sessions/{_REF}/access", AccessHandler),
    (f"{API}/sessions/{_REF}/containers/{_HOST}/logs", LogsHandler),
    (f"{API}/sessions/{_REF}/containers/{_HOST}/terminals", TerminalsHandler),
]
