"""Reconciliation and a session another process is ending right now.

Any engine start-up (every CLI command runs one) reconciles the store with Docker.
A session that ``rm`` in another terminal is removing at that moment is TERMINATING
with its containers still there: reconciliation must leave it to that process, as
long as it runs (two removals of the same containers trip over each other: "volume
is in use"), and finish it once that process is gone. A session that ended after
reconciliation's scan of Docker began is no orphan either: the scan may list
containers that are gone by now (no "no live record" warning for it).
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from jupyter_cluster.core.models import Session
from jupyter_cluster.core.naming import DEFAULT_IMAGE
from jupyter_cluster.core.state import SessionStatus
from jupyter_cluster.engine.agents.fake import FakeAgent
from jupyter_cluster.engine.manager import ClusterManager
from jupyter_cluster.engine.store.drivers import this_process

from .test_drivers import exited_pid
from .test_reconcile import one_agent


async def being_removed(
    tmp_path: Path, size: int, remover: int, reason: str = "terminated"
) -> tuple[ClusterManager, FakeAgent, Session]:
    """A running session of ``size`` on a fake agent, marked TERMINATING (``reason``)
    by the process ``remover``, which recorded itself as it removes: what another
    process sees while ``rm`` is at work, or after it died there."""
    manager, agent = one_agent(tmp_path)
    session = await manager.launch(manager.make_spec(image=DEFAULT_IMAGE, size=size))
    manager.store.set_status(session.id, SessionStatus.TERMINATING, reason)
    manager.store.set_driver(session.id, this_process(remover))
    return manager, agent, session


async def test_a_removal_another_live_process_is_doing_is_left_to_it(
    tmp_path: Path, other_process: int
) -> None:
    manager, agent, session = await being_removed(tmp_path, 2, other_process)
    await manager.refresh()
    assert manager.store.require(session.id).status is SessionStatus.TERMINATING
    assert len(agent.containers) == 2  # not removed under the other process's feet
    await manager.close()


async def test_a_removal_whose_process_died_is_finished(tmp_path: Path) -> None:
    manager, agent, session = await being_removed(tmp_path, 2, exited_pid())
    await manager.refresh()
    ended = manager.store.require(session.id)
    assert ended.status is SessionStatus.TERMINATED and ended.status_reason == "terminated"
    assert agent.containers == {} and agent.networks == {}
    await manager.close()


async def test_terminate_records_itself_while_it_removes_and_clears_after(
    tmp_path: Path,
) -> None:
    manager, agent = one_agent(tmp_path)
    session = await manager.launch(manager.make_spec(image=DEFAULT_IMAGE, size=2))
    seen = []
    real_remove = agent.remove_container

    async def remove(container_id: str) -> None:
        seen.append(manager.store.driver(session.id))
        await real_remove(container_id)

    agent.remove_container = remove  # type: ignore[method-assign]
    await manager.terminate(session.id)
    assert seen and set(seen) == {this_process()}
    assert manager.store.driver(session.id) is None
    await manager.close()


async def test_a_session_that_ended_during_the_scan_is_no_orphan(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    manager, agent = one_agent(tmp_path)
    session = await manager.launch(manager.make_spec(image=DEFAULT_IMAGE, size=2))
    real_list = agent.list_containers
    scans: list[list[object]] = []

    async def stale_scan(labels: object, **how: object) -> object:
        found = await real_list(labels, **how)  # type: ignore[arg-type]
        if not scans:  # the session ends (elsewhere) right after Docker was listed
            scans.append(list(found))
            await manager.terminate(session.id)
        return found

    agent.list_containers = stale_scan  # type: ignore[method-assign,assignment]
    with caplog.at_level(logging.WARNING):
        await manager.refresh()
    assert scans and len(scans[0]) == 2  # the scan did list its two containers
    assert "no live record" not in caplog.text
    assert manager.store.require(session.id).status is SessionStatus.TERMINATED
    await manager.close()
