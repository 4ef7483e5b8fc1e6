"""One reading of a session's stats per interval, shared by everyone who follows it.

``GET sessions/{id}/stats?follow=1`` (the sidebar's graphs, several tabs, scripts)
streams samples every ``ClusterApp.stats_interval`` seconds. However many clients
follow one session, its :class:`StatsFeed` reads the agents once per interval and
hands each sample to all of them: five followers cost what one does. A feed starts
with its first follower and stops with its last, at once (nothing is read when
nobody watches). Used by :mod:`.handlers.stats` through :func:`feeds_of`.
"""

from __future__ import annotations

import asyncio
import time
import weakref
from collections.abc import Awaitable, Callable
from typing import Any

#: One sample as the REST API sends it.
Sample = dict[str, Any]
#: Reads one sample of a session (raises when it can no longer be read).
Reader = Callable[[], Awaitable[Sample]]


class StatsFeed:
    """The samples of one session while anyone follows it (see the module docstring)."""

    def __init__(self, read: Reader, interval: float, on_idle: Callable[[], None]) -> None:
        self.read, self.interval, self.on_idle = read, interval, on_idle
        self.followers = 0
        self._latest: Sample | Exception | None = None
        self._seq = 0  # number of the latest sample
        self._news: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._task: asyncio.Task[None] | None = None

    def join(self) -> int:
        """A follower comes: start reading if nobody did; the number of the latest
        sample, which that follower does not need (it read its first one itself)."""
        self.followers += 1
        if self._task is None or self._task.done():
            self._task = asyncio.ensure_future(self._run())
        return self._seq

    def leave(self) -> None:
        """A follower goes; the last one stops the reading."""
        self.followers -= 1
        if self.followers <= 0:
            if self._task is not None:
                self._task.cancel()
            self.on_idle()

    async def next(self, seen: int, stop: asyncio.Event) -> tuple[int, Sample] | None:
        """The latest sample after number ``seen`` (waiting for it) with its number;
        None once ``stop`` is set (the client went away). Raises what reading raised
        (e.g. the session ended)."""
        stopped: asyncio.Future[Any] = asyncio.ensure_future(stop.wait())
        try:
            while self._seq <= seen and not stop.is_set():
                either: set[asyncio.Future[Any]] = {self._news, stopped}
                await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stopped.cancel()
        if stop.is_set():
            return None
        if isinstance(self._latest, Exception):
            raise self._latest
        assert self._latest is not None
        return self._seq, self._latest

    async def _run(self) -> None:
        while True:
            started = time.monotonic()
            try:
                sample: Sample | Exception = await self.read()
            except Exception as exc:  # every follower says so and ends
                sample = exc
            self._latest, self._seq = sample, self._seq + 1
            news, self._news = self._news, asyncio.get_running_loop().create_future()
            news.set_result(None)
            if isinstance(sample, Exception):
                return
            await asyncio.sleep(max(self.interval - (time.monotonic() - started), 0))


class StatsFeeds:
    """The feeds of one server's sessions, by session id."""

    def __init__(self) -> None:
        self.feeds: dict[str, StatsFeed] = {}

    def follow(self, session_id: str, read: Reader, interval: float) -> tuple[StatsFeed, int]:
        """Join the session's feed (made on first use, forgotten when its last follower
        leaves): the feed, whose ``leave`` the follower calls when done, and the
        number of its latest sample (see :meth:`StatsFeed.join`)."""
        feed = self.feeds.get(session_id)
        if feed is None:

            def forget() -> None:
                self.feeds.pop(session_id, None)

            feed = self.feeds[session_id] = StatsFeed(read, interval, forget)
        return feed, feed.join()


_FEEDS: weakref.WeakKeyDictionary[Any, StatsFeeds] = weakref.WeakKeyDictionary()


def feeds_of(service: Any) -> StatsFeeds:
    """The stats feeds of ``service`` (the server's ClusterService)."""
    found = _FEEDS.get(service)
    if found is None:
        found = _FEEDS[service] = StatsFeeds()
    return found
