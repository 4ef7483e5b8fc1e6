"""unless: work runs until a stop condition comes first, and nothing is left running.

Used by a launch that stops when another process ends its session, and by the
kernel provisioner, whose launch stops with its Jupyter server. Each case checks
that the work's own clean-up ran and that no task of it is left behind.
"""

from __future__ import annotations

import asyncio

import pytest

from jupyter_cluster.asyncwait import unless


class Work:
    """A piece of work that takes ``seconds`` and records its clean-up."""

    def __init__(self, seconds: float, result: str = "done") -> None:
        self.seconds, self.result = seconds, result
        self.cleaned = False

    async def run(self) -> str:
        try:
            await asyncio.sleep(self.seconds)
            return self.result
        finally:
            await asyncio.sleep(0.01)  # a clean-up that itself awaits
            self.cleaned = True


def others() -> set[asyncio.Task[object]]:
    return {t for t in asyncio.all_tasks() if t is not asyncio.current_task()}


async def test_work_that_ends_first_gives_its_result_and_the_stop_is_dropped() -> None:
    work = Work(0.01, "brought up")
    assert await unless(work.run(), asyncio.sleep(5)) == (True, "brought up")
    await asyncio.sleep(0)
    assert others() == set()


async def test_a_stop_that_comes_first_cancels_the_work_and_waits_for_its_clean_up() -> None:
    work = Work(5)
    assert await unless(work.run(), asyncio.sleep(0.01)) == (False, None)
    assert work.cleaned  # awaited to its end, not left to finish later
    assert others() == set()


async def test_an_error_of_the_work_is_raised() -> None:
    async def fails() -> None:
        await asyncio.sleep(0.01)
        raise ValueError("the image is missing")

    with pytest.raises(ValueError, match="the image is missing"):
        await unless(fails(), asyncio.sleep(5))
    await asyncio.sleep(0)
    assert others() == set()


async def test_an_error_of_the_stop_stops_the_work_and_is_raised() -> None:
    async def broken_stop() -> None:
        await asyncio.sleep(0.01)
        raise OSError("the store is gone")

    work = Work(5)
    with pytest.raises(OSError, match="the store is gone"):
        await unless(work.run(), broken_stop())
    assert work.cleaned and others() == set()


async def test_cancelling_the_caller_cancels_the_work_and_leaves_nothing_running() -> None:
    work = Work(5)
    caller = asyncio.ensure_future(unless(work.run(), asyncio.sleep(5)))
    await asyncio.sleep(0.01)
    caller.cancel()
    with pytest.raises(asyncio.CancelledError):
        await caller
    assert work.cleaned  # plain asyncio.wait would have left the work running
    assert others() == set()
