"""The scheduling loop (engine.launch.queue_loop) with the fake agent and a real store:
concurrent launches queue and start as room appears, woken by a termination in this
process (not by polling: the poll interval here is long), in the site's order; the
drivers never place their own session; the loop runs only while someone waits,
or while a server keeps it."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from jupyter_cluster.core.naming import DEFAULT_IMAGE
from jupyter_cluster.core.state import SessionStatus
from jupyter_cluster.engine.agents.fake import FakeAgent
from jupyter_cluster.engine.launch.queue_loop import QueueLoop
from jupyter_cluster.engine.manager import ClusterManager
from jupyter_cluster.engine.store.sessions import Store
from tests.unit.fake_engine import fake_manager


async def until(manager: ClusterManager, name: str, reason: str) -> None:
    """Wait (up to 10 s) until session ``name`` exists with ``reason`` in its reason."""
    for _ in range(200):
        found = [s for s in await manager.list() if s.name == name]
        if found and reason in found[0].status_reason:
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"{name} never got the reason {reason!r}")


@pytest.fixture
def no_self_placing(monkeypatch: pytest.MonkeyPatch) -> None:
    """Drivers must not place their own session any more."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("a driver placed its own session")

    monkeypatch.setattr(Store, "try_place", refuse)


async def test_queued_launches_start_when_room_appears(
    tmp_path: Path, no_self_placing: None
) -> None:
    # A long poll interval: only the loop's wake-up can start the waiting ones quickly.
    manager = fake_manager(
        tmp_path, FakeAgent("local", cpu=2, ready_on_start=True), pending_poll_interval=30
    )
    specs = [
        manager.make_spec(image=DEFAULT_IMAGE, cpu=1, mem="64m", name=f"s{i}") for i in range(4)
    ]
    launches = [asyncio.ensure_future(manager.launch(spec)) for spec in specs]
    for _ in range(200):
        sessions = await manager.list()
        if sum(s.status is SessionStatus.RUNNING for s in sessions) == 2 and len(sessions) == 4:
            break
        await asyncio.sleep(0.05)
    by_name = {s.name: s for s in await manager.list()}
    assert [by_name[f"s{i}"].status for i in range(4)] == [SessionStatus.RUNNING] * 2 + [
        SessionStatus.PENDING
    ] * 2
    assert by_name["s2"].status_reason.startswith("1st in the queue of resource group default")
    assert "waiting behind 1 earlier session(s) (next: s2)" in by_name["s3"].status_reason
    assert manager.launcher.queue._task is not None and not manager.launcher.queue._task.done()
    await manager.terminate("s0")
    third = await asyncio.wait_for(launches[2], 10)
    assert third.status is SessionStatus.RUNNING and third.status_reason == ""
    await manager.terminate("s1")
    assert (await asyncio.wait_for(launches[3], 10)).status is SessionStatus.RUNNING
    await asyncio.gather(*launches)
    await asyncio.sleep(0)
    assert manager.launcher.queue._task is None or manager.launcher.queue._task.done()
    placed = [(await manager.get(f"s{i}")).timings for i in range(4)]
    assert all({"queue", "place"} <= set(t) for t in placed)
    await manager.close()


async def test_fair_share_starts_the_lighter_owner_first(tmp_path: Path) -> None:
    manager = fake_manager(
        tmp_path,
        FakeAgent("local", cpu=4, ready_on_start=True),
        queue_order="fair-share",
        pending_poll_interval=30,
    )

    def spec(name: str) -> Any:
        return manager.make_spec(image=DEFAULT_IMAGE, cpu=1, mem="64m", name=name)

    await manager.launch(spec("ann0"), owner="ann")
    await manager.launch(spec("ann1"), owner="ann")
    await manager.launch(spec("ann2"), owner="ann")
    await manager.launch(spec("bob0"), owner="bob")  # the agent is full now
    ann = asyncio.ensure_future(manager.launch(spec("ann3"), owner="ann"))
    await until(manager, "ann3", "1st in the queue")
    bob = asyncio.ensure_future(manager.launch(spec("bob1"), owner="bob"))
    await until(manager, "ann3", "2nd in the queue")  # bob1 went ahead of it
    waiting = await manager.get("bob1")
    assert waiting.status_reason.startswith(
        "1st in the queue of resource group default (fair share)"
    )
    await manager.terminate("ann0")  # room for one: bob (1 CPU) holds less than ann (2)
    assert (await asyncio.wait_for(bob, 10)).status is SessionStatus.RUNNING
    assert (await manager.get("ann3")).status is SessionStatus.PENDING
    await manager.terminate("bob0")
    assert (await asyncio.wait_for(ann, 10)).status is SessionStatus.RUNNING
    await manager.close()


async def test_a_server_keeps_the_loop_running_until_it_stops(tmp_path: Path) -> None:
    manager = fake_manager(tmp_path, FakeAgent("local", cpu=1), pending_poll_interval=0.05)
    loops = [job for job in manager.upkeep(lambda: None) if isinstance(job, QueueLoop)]
    assert loops == [manager.launcher.queue]
    loop = loops[0]
    loop.start()
    first = await manager.submit(manager.make_spec(image=DEFAULT_IMAGE, cpu=1, mem="64m"))
    second = await manager.submit(manager.make_spec(image=DEFAULT_IMAGE, cpu=1, mem="64m"))
    assert first.status is SessionStatus.PREPARING and second.status is SessionStatus.PENDING
    # No driver waits for `second`: the server's loop places it once there is room.
    manager.store.set_status(first.id, SessionStatus.ERROR)
    for _ in range(100):
        if manager.store.require(second.id).status is SessionStatus.PREPARING:
            break
        await asyncio.sleep(0.05)
    assert manager.store.require(second.id).status is SessionStatus.PREPARING
    await loop.stop()
    assert loop._task is None or loop._task.done()
    await manager.close()


async def test_a_driver_cancelled_as_a_pass_ends_cancels_its_session(tmp_path: Path) -> None:
    # asyncio.wait_for (Python < 3.12) swallowed a cancel that came as a pass ended:
    # the driver went on waiting and a DELETE of its session hung until it timed out.
    manager = fake_manager(
        tmp_path, FakeAgent("local", cpu=1, ready_on_start=True), pending_poll_interval=30
    )
    queue = manager.launcher.queue
    await manager.launch(manager.make_spec(image=DEFAULT_IMAGE, cpu=1, mem="64m"))  # full
    for yields in range(4):  # the cancel lands at each point of the driver's wake-up
        spec = manager.make_spec(image=DEFAULT_IMAGE, cpu=1, mem="64m", name=f"w{yields}")
        waiting = await manager.submit(spec)
        driver = asyncio.ensure_future(manager.drive(waiting.id))
        await until(manager, f"w{yields}", "1st in the queue")
        await asyncio.sleep(0.05)  # parked in its wait for the next pass
        await queue.run_pass()
        for _ in range(yields):
            await asyncio.sleep(0)
        driver.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(driver, 5)
        assert (await manager.get(waiting.id)).status is SessionStatus.CANCELLED
    await manager.close()
