"""One reading per interval for every follower of a session's stats (#14 item 1): the
feed behind ``GET sessions/{id}/stats?follow=1``, with a counting reader (no server)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from jupyter_cluster.server.stats_feed import StatsFeeds

INTERVAL = 0.05


class Reader:
    """Counts its reads; fails from read number ``fail_at`` on."""

    def __init__(self, fail_at: int = 0) -> None:
        self.reads, self.fail_at = 0, fail_at

    async def __call__(self) -> dict[str, Any]:
        self.reads += 1
        if self.fail_at and self.reads >= self.fail_at:
            raise RuntimeError("session x is TERMINATED, not running")
        await asyncio.sleep(0.01)
        return {"n": self.reads}


async def test_followers_share_each_reading_and_the_last_one_stops_it() -> None:
    feeds, read = StatsFeeds(), Reader()
    stop = [asyncio.Event() for _ in range(5)]
    joined = [feeds.follow("s1", read, INTERVAL) for _ in range(5)]
    feed = joined[0][0]
    assert all(f is feed for f, _ in joined) and feed.followers == 5
    got = [await feed.next(seen, stop[i]) for i, (_, seen) in enumerate(joined)]
    assert all(g == got[0] for g in got) and got[0] is not None
    for _ in range(3):  # three more samples, read once each for all five
        seq = got[0][0]
        got = [await feed.next(seq, s) for s in stop]
        assert len({g[0] for g in got if g}) == 1 and got[0] is not None
    assert read.reads in (4, 5)  # not 5 x 4
    for f, _ in joined:
        f.leave()
    assert "s1" not in feeds.feeds
    await asyncio.sleep(INTERVAL * 4)
    stopped_at = read.reads
    await asyncio.sleep(INTERVAL * 4)
    assert read.reads == stopped_at  # nobody watches: nothing is read


async def test_a_client_that_goes_away_stops_waiting_at_once() -> None:
    feed, seen = StatsFeeds().follow("s1", Reader(), 60.0)
    first = await feed.next(seen, asyncio.Event())
    assert first is not None
    gone = asyncio.Event()
    waiting = asyncio.ensure_future(feed.next(first[0], gone))
    await asyncio.sleep(0.05)
    assert not waiting.done()  # the next sample is a minute away
    gone.set()
    assert await asyncio.wait_for(waiting, 1) is None
    feed.leave()


async def test_a_session_that_can_no_longer_be_read_ends_every_stream() -> None:
    feeds, read = StatsFeeds(), Reader(fail_at=2)
    feed, seen = feeds.follow("s1", read, INTERVAL)
    assert feeds.follow("s1", read, INTERVAL)[0] is feed  # a second follower
    first = await feed.next(seen, asyncio.Event())
    assert first is not None
    for _ in range(2):
        with pytest.raises(RuntimeError, match="not running"):
            await feed.next(first[0], asyncio.Event())
    feed.leave()
    feed.leave()
    assert feeds.feeds == {}
