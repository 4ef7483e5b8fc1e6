"""ended / stopped: waiting for a task's end raises the caller's cancel, not the task's.

``task.cancel()`` then ``with suppress(CancelledError): await task`` swallowed both:
the event hub's ``stop``, the SSH tunnel's ``close`` and the log stream handler went
on after their own caller was cancelled.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

import jupyter_cluster
from jupyter_cluster.asyncwait import ended, stopped


async def suppressing(task: asyncio.Future[None]) -> None:
    """The way the three places stopped a task before ``stopped``."""
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task


async def slow_to_stop(cleaned: list[str]) -> None:
    """A task that takes a while to end once cancelled (as a poller finishing a read)."""
    try:
        await asyncio.sleep(30)
    except asyncio.CancelledError:
        await asyncio.sleep(0.05)
        cleaned.append("cleaned")
        raise


async def test_stopped_cancels_the_task_and_returns_once_it_has_ended() -> None:
    cleaned: list[str] = []
    task = asyncio.ensure_future(slow_to_stop(cleaned))
    await asyncio.sleep(0)
    await stopped(task)
    assert task.cancelled()
    assert cleaned == ["cleaned"]


@pytest.mark.parametrize(("way", "propagates"), [(stopped, True), (suppressing, False)])
async def test_a_caller_cancelled_while_the_task_stops_is_cancelled(
    way: Callable[[asyncio.Future[None]], Awaitable[None]], propagates: bool
) -> None:
    cleaned: list[str] = []
    went_on = False

    async def caller() -> None:  # as a server's shutdown stopping the event hub
        nonlocal went_on
        child = asyncio.ensure_future(slow_to_stop(cleaned))
        await asyncio.sleep(0)  # the child runs
        await way(child)
        went_on = True

    task = asyncio.ensure_future(caller())
    await asyncio.sleep(0.01)  # the child is cancelled and cleaning up
    task.cancel()
    await asyncio.wait((task,), timeout=2)
    assert task.done()
    assert task.cancelled() is propagates
    assert went_on is not propagates  # the old way went on as if never cancelled
    if propagates:  # and the child was left to finish its clean-up
        await asyncio.sleep(0.1)
        assert cleaned == ["cleaned"]


async def test_stopped_raises_the_error_a_task_ended_with() -> None:
    async def broken() -> None:
        raise RuntimeError("the poll failed")

    task = asyncio.ensure_future(broken())
    await asyncio.sleep(0)
    with pytest.raises(RuntimeError, match="the poll failed"):
        await stopped(task)


async def test_ended_returns_when_someone_else_cancels_the_task() -> None:
    pump = asyncio.ensure_future(asyncio.sleep(30))  # as the log stream's pump
    asyncio.get_running_loop().call_later(0.01, pump.cancel)  # the client left
    await ended(pump)
    assert pump.cancelled()


async def test_ended_cancels_the_task_with_its_caller() -> None:
    pump = asyncio.ensure_future(asyncio.sleep(30))
    handler = asyncio.ensure_future(ended(pump))
    await asyncio.sleep(0.01)
    handler.cancel()
    await asyncio.wait((handler,), timeout=2)
    assert handler.cancelled()
    assert pump.cancelled()


def test_no_module_of_the_package_suppresses_a_cancel_around_an_await() -> None:
    package = Path(jupyter_cluster.__file__).parent
    users = [
        str(path.relative_to(package))
        for path in sorted(package.rglob("*.py"))
        if "suppress(asyncio.CancelledError" in path.read_text()
    ]
    assert users == [], f"use asyncwait.stopped or ended in {users}"
