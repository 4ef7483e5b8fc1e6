"""through: a clean-up runs to its end however often its caller is cancelled meanwhile.

A launch's removal of what it made, and a creation's undoing once its caller left,
run because their caller was cancelled, and may be cancelled again (a launch that
another process's removal stops while it already cleans up after a failure). Cut
short, they left a container Docker was still making (one CI run: a session
TERMINATED with its sub1 still there). Each case checks the work's end, what the
caller is told, and that no task of it is left.
"""

from __future__ import annotations

import asyncio

import pytest

from jupyter_cluster.asyncwait import through, unless


def others() -> set[asyncio.Task[object]]:
    return {t for t in asyncio.all_tasks() if t is not asyncio.current_task()}


async def test_work_left_alone_gives_its_result_or_its_error() -> None:
    async def answer() -> str:
        await asyncio.sleep(0.01)
        return "removed"

    async def fails() -> None:
        await asyncio.sleep(0.01)
        raise OSError("the agent went away")

    assert await through(answer()) == "removed"
    with pytest.raises(OSError, match="the agent went away"):
        await through(fails())
    assert others() == set()


async def test_a_caller_cancelled_twice_still_waits_for_the_work_then_is_cancelled() -> None:
    gate = asyncio.Event()
    steps: list[str] = []

    async def clean_up() -> None:
        await gate.wait()  # Docker's answer to a creation in flight
        steps.append("removed what was made")

    async def caller() -> None:
        try:
            await through(clean_up())
        finally:
            steps.append("caller ended")

    task = asyncio.ensure_future(caller())
    await asyncio.sleep(0.01)
    task.cancel()
    await asyncio.sleep(0.01)
    task.cancel()  # again, as a launch's stop does while it cleans up
    await asyncio.sleep(0.05)
    assert not task.done() and steps == []  # the clean-up is not cut short
    gate.set()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert steps == ["removed what was made", "caller ended"]
    assert others() == set()


async def test_an_error_of_the_work_is_chained_to_the_callers_cancellation() -> None:
    gate = asyncio.Event()

    async def clean_up() -> None:
        await gate.wait()
        raise OSError("volume is in use")

    task = asyncio.ensure_future(through(clean_up()))
    await asyncio.sleep(0.01)
    task.cancel()
    await asyncio.sleep(0.01)
    gate.set()
    with pytest.raises(asyncio.CancelledError) as raised:
        await task
    assert isinstance(raised.value.__cause__, OSError)


async def test_unless_waits_for_the_works_clean_up_when_its_caller_is_cancelled_twice() -> None:
    gate = asyncio.Event()
    cleaned: list[bool] = []

    async def work() -> None:
        try:
            await asyncio.sleep(5)
        finally:
            await through(gate.wait())  # a clean-up that must not be cut short
            cleaned.append(True)

    task = asyncio.ensure_future(unless(work(), asyncio.sleep(5)))
    await asyncio.sleep(0.01)
    task.cancel()
    await asyncio.sleep(0.01)
    task.cancel()
    await asyncio.sleep(0.05)
    assert not task.done() and cleaned == []  # nothing left running unowned
    gate.set()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert cleaned == [True]
    assert others() == set()
