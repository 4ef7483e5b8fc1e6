"""wait_set: waiting for an event with a timeout never swallows the waiter's cancel
(asyncio.wait_for on Python < 3.12 does when the event is set at the same moment)."""

from __future__ import annotations

import asyncio

import pytest

from jupyter_cluster.asyncwait import wait_set


async def test_set_within_the_timeout_is_true_and_a_timeout_is_false() -> None:
    event = asyncio.Event()
    assert await wait_set(event, 0.01) is False
    asyncio.get_running_loop().call_later(0.01, event.set)
    assert await wait_set(event, 5) is True
    assert await wait_set(event, 0) is True  # already set: no wait at all


async def test_the_inner_wait_is_never_left_behind() -> None:
    before = len(asyncio.all_tasks())
    await wait_set(asyncio.Event(), 0.01)
    await asyncio.sleep(0)
    assert len(asyncio.all_tasks()) == before


@pytest.mark.parametrize("yields", range(6))
async def test_a_cancel_as_the_event_is_set_ends_the_waiting_loop(yields: int) -> None:
    event = asyncio.Event()
    woken = 0

    async def loop() -> None:  # as the scheduling loop's drivers and the event poller
        nonlocal woken
        while True:
            await wait_set(event, 30)
            woken += 1
            event.clear()

    task = asyncio.ensure_future(loop())
    await asyncio.sleep(0)
    event.set()
    for _ in range(yields):
        await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 2)
    assert woken <= 1
