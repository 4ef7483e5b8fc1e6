"""Two removals of one session at once: the second waits for the first.

A user runs ``jupyter cluster rm`` twice, or deletes a session in the Lab while
``rm`` runs in a terminal. Both removing the same containers at the same moment made
one of them fail on the other's work ("could not remove everything … volume is in
use", exit code 1). A removal in another live process (the session's recorded
remover) is now awaited, and taken over if that process dies; a second removal in
the same process awaits the first.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from jupyter_cluster.core.naming import DEFAULT_IMAGE
from jupyter_cluster.core.state import ContainerStatus, SessionStatus
from jupyter_cluster.engine.ending import OTHER_REMOVAL_POLL

from .test_drivers import exited_pid
from .test_reconcile import one_agent
from .test_reconcile_ending import being_removed


async def test_a_removal_another_live_process_is_doing_is_awaited(
    tmp_path: Path, other_process: int
) -> None:
    manager, agent, session = await being_removed(tmp_path, 3, other_process, "idle for 2 hours")
    store = manager.store
    second = asyncio.ensure_future(manager.terminate(session.id))
    await asyncio.sleep(4 * OTHER_REMOVAL_POLL)
    assert not second.done()
    assert not [c for c, _ in agent.calls if c == "remove_container"]  # left to the other

    for container in session.containers:  # the other process finishes its removal
        await agent.remove_container(container.container_id or "")
        store.update_container(session.id, container.host, status=ContainerStatus.TERMINATED)
    store.set_status(session.id, SessionStatus.TERMINATED, "idle for 2 hours")
    store.set_driver(session.id, None)
    removals = len([c for c, _ in agent.calls if c == "remove_container"])
    ended = await asyncio.wait_for(second, 5)
    assert ended.status is SessionStatus.TERMINATED
    assert ended.status_reason == "idle for 2 hours"  # the first removal's reason kept
    assert len([c for c, _ in agent.calls if c == "remove_container"]) == removals
    await manager.close()


async def test_a_removal_whose_process_died_is_taken_over_at_once(tmp_path: Path) -> None:
    manager, agent, session = await being_removed(tmp_path, 3, exited_pid())
    ended = await asyncio.wait_for(manager.terminate(session.id), 5)
    assert ended.status is SessionStatus.TERMINATED
    assert agent.containers == {} and agent.networks == {} and agent.volumes == {}
    await manager.close()


async def test_two_removals_in_one_process_remove_each_container_once(tmp_path: Path) -> None:
    manager, agent = one_agent(tmp_path)
    session = await manager.launch(manager.make_spec(image=DEFAULT_IMAGE, size=3))
    gate = asyncio.Event()
    real_remove = agent.remove_container

    async def slow_remove(container_id: str) -> None:
        await gate.wait()
        await real_remove(container_id)

    agent.remove_container = slow_remove  # type: ignore[method-assign]
    first = asyncio.ensure_future(manager.terminate(session.id, "by the admin"))
    await asyncio.sleep(0.05)
    second = asyncio.ensure_future(manager.terminate(session.id))
    await asyncio.sleep(0.05)
    gate.set()
    ended = await asyncio.wait_for(asyncio.gather(first, second), 5)
    assert [s.status for s in ended] == [SessionStatus.TERMINATED] * 2
    assert [s.status_reason for s in ended] == ["by the admin"] * 2
    removed = [name for call, name in agent.calls if call == "remove_container"]
    assert len(removed) == len(set(removed)) == 3  # each container once, not twice
    assert agent.containers == {} and agent.volumes == {}
    await manager.close()
