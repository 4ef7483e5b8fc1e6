"""Removing a session's subs while main1's kernel exits (issue 27 item 2), with fake
agents: ``ClusterManager.remove_subs`` keeps the subs' logs and CPU time and removes
them; a terminate that comes meanwhile removes main1 at once, leaves the subs to it
and waits for it before the network; what it could not remove is swept; and nothing
is done twice or for a session that is no longer running."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from jupyter_cluster.core.models import Session
from jupyter_cluster.core.naming import DEFAULT_IMAGE
from jupyter_cluster.core.state import KERNEL_EXITING, ContainerStatus, SessionStatus
from jupyter_cluster.engine.agents.fake import FakeAgent
from jupyter_cluster.engine.manager import ClusterManager
from jupyter_cluster.engine.store import drivers
from jupyter_cluster.engine.store.drivers import Driver, this_process
from jupyter_cluster.errors import AgentError


class HeldAgent(FakeAgent):
    """A fake agent whose removals of the containers in ``held`` wait for ``go``,
    and fail (once each) for those in ``failing``."""

    def __init__(self) -> None:
        super().__init__("a1", ready_on_start=True)
        self.held: set[str] = set()
        self.failing: set[str] = set()
        self.go = asyncio.Event()
        self.removing: list[str] = []

    async def remove_container(self, container_id: str) -> None:
        self.removing.append(container_id)
        if container_id in self.held:
            await self.go.wait()
        if container_id in self.failing:
            self.failing.discard(container_id)
            raise AgentError(f"agent a1: removing {container_id} failed", "a1")
        await super().remove_container(container_id)


@pytest.fixture
async def manager(tmp_path: Path) -> AsyncIterator[ClusterManager]:
    agent = HeldAgent()
    found = ClusterManager(
        db_path=str(tmp_path / "cluster.db"),
        data_root=str(tmp_path / "folders"),
        agents=[{"id": "a1"}],
        agent_factory=lambda config: agent,
    )
    found.test_agent = agent  # type: ignore[attr-defined]
    yield found
    agent.go.set()
    for session in await found.list():
        await found.terminate(session.id)
    await found.close()


def fake(manager: ClusterManager) -> HeldAgent:
    return manager.test_agent  # type: ignore[attr-defined, no-any-return]


async def launch(manager: ClusterManager, size: int) -> Session:
    """A running session whose containers each logged a line and used CPU time."""
    spec = manager.make_spec(image=DEFAULT_IMAGE, size=size, cpu=0.25, mem="64m")
    session = await manager.launch(spec)
    for i, c in enumerate(session.containers):
        cid = c.container_id or ""
        fake(manager).emit(cid, f"last words of {c.host}\n")
        fake(manager).containers[cid].cpu_seconds = 1.0 + i
    return session


async def until(condition: Callable[[], bool]) -> None:
    """Let the engine's tasks run until ``condition`` holds (2 s at most)."""
    for _ in range(400):
        if condition():
            return
        await asyncio.sleep(0.005)
    raise AssertionError("the engine never got there")


def cid(session: Session, host: str) -> str:
    return session.locate(host).container_id or ""


def statuses(manager: ClusterManager, session: Session) -> dict[str, ContainerStatus]:
    return {c.host: c.status for c in manager.store.require(session.id).containers}


async def test_the_subs_go_first_with_their_logs_and_cpu_time_then_terminate_ends_main1(
    manager: ClusterManager,
) -> None:
    session = await launch(manager, 3)
    agent = fake(manager)

    await manager.remove_subs(session.id)

    early = manager.store.require(session.id)
    assert early.status is SessionStatus.TERMINATING
    assert statuses(manager, session) == {
        "main1": ContainerStatus.RUNNING,
        "sub1": ContainerStatus.TERMINATED,
        "sub2": ContainerStatus.TERMINATED,
    }
    assert set(agent.containers) == {cid(session, "main1")}
    assert agent.networks  # main1 still uses it
    assert [c.cpu_seconds for c in early.containers] == [None, 2.0, 3.0]
    assert list(manager.log_archive.lines(session.id, "sub2", tail=1)) == ["last words of sub2\n"]

    ended = await manager.terminate(session.id)

    assert ended.status is SessionStatus.TERMINATED
    assert [c.cpu_seconds for c in ended.containers] == [1.0, 2.0, 3.0]
    assert list(manager.log_archive.lines(session.id, "main1", tail=1)) == ["last words of main1\n"]
    assert list(manager.log_archive.lines(session.id, "sub1", tail=1)) == ["last words of sub1\n"]
    assert not agent.containers and not agent.networks
    removed = [c for m, c in agent.calls if m == "remove_container"]
    assert sorted(removed) == sorted(c.container_id for c in session.containers)


async def test_terminate_meanwhile_removes_main1_at_once_and_the_network_after_the_subs(
    manager: ClusterManager,
) -> None:
    session = await launch(manager, 3)
    agent = fake(manager)
    agent.held = {cid(session, "sub1"), cid(session, "sub2")}

    early = asyncio.ensure_future(manager.remove_subs(session.id))
    await until(lambda: set(agent.removing) == agent.held)
    ending = asyncio.ensure_future(manager.terminate(session.id))

    await until(lambda: cid(session, "main1") not in agent.containers)
    await asyncio.sleep(0.05)
    assert not ending.done()
    assert agent.networks  # the subs still use it
    assert set(agent.containers) == agent.held

    agent.go.set()
    ended = await ending
    await early
    assert ended.status is SessionStatus.TERMINATED
    assert not agent.containers and not agent.networks
    assert sorted(agent.removing) == sorted(c.container_id for c in session.containers)
    assert [c.cpu_seconds for c in ended.containers] == [1.0, 2.0, 3.0]


async def test_a_sub_the_early_removal_could_not_remove_is_swept_by_terminate(
    manager: ClusterManager,
) -> None:
    session = await launch(manager, 3)
    agent = fake(manager)
    sub1 = cid(session, "sub1")
    agent.held = {sub1}
    agent.failing = {sub1}

    early = asyncio.ensure_future(manager.remove_subs(session.id))
    await until(lambda: sub1 in agent.removing)
    ending = asyncio.ensure_future(manager.terminate(session.id))
    await until(lambda: cid(session, "main1") not in agent.containers)
    agent.go.set()

    ended = await ending
    await early
    assert ended.status is SessionStatus.TERMINATED
    assert not agent.containers and not agent.networks
    assert agent.removing.count(sub1) == 2  # failed early, then swept


async def test_nothing_is_removed_early_once_the_session_is_not_running(
    manager: ClusterManager,
) -> None:
    session = await launch(manager, 2)
    agent = fake(manager)
    await manager.terminate(session.id)
    calls = len(agent.calls)

    await manager.remove_subs(session.id)

    assert len(agent.calls) == calls
    assert manager.store.require(session.id).status is SessionStatus.TERMINATED


async def test_a_size_1_session_is_only_marked_terminating(manager: ClusterManager) -> None:
    session = await launch(manager, 1)
    agent = fake(manager)

    await manager.remove_subs(session.id)

    assert manager.store.require(session.id).status is SessionStatus.TERMINATING
    assert cid(session, "main1") in agent.containers
    assert (await manager.terminate(session.id)).status is SessionStatus.TERMINATED
    assert not agent.containers and not agent.networks


async def test_another_processs_reconciliation_leaves_main1_to_the_ending_process(
    manager: ClusterManager,
) -> None:
    # A server's periodic pass over the same store, while a script's kernel exits,
    # used to finish the termination and cut main1's last lines off.
    session = await launch(manager, 2)
    agent = fake(manager)
    await manager.remove_subs(session.id)
    marked = manager.store.require(session.id)
    assert marked.status_reason == KERNEL_EXITING
    assert manager.store.driver(session.id) == this_process()
    other = ClusterManager(
        db_path=manager.db_path,
        data_root=manager.data_root,
        agents=[{"id": "a1"}],
        agent_factory=lambda config: agent,
    )
    try:
        await other.refresh()
        assert manager.store.require(session.id).status is SessionStatus.TERMINATING
        assert cid(session, "main1") in agent.containers

        # The ending process died: the next pass takes its termination over.
        manager.store.set_driver(session.id, Driver(2**22 + 1, this_process().host, "gone"))
        await other.refresh()
    finally:
        await other.close()
    ended = manager.store.require(session.id)
    assert (ended.status, ended.status_reason) == (SessionStatus.TERMINATED, "terminated")
    assert not agent.containers and not agent.networks


async def test_a_kernel_exit_that_takes_too_long_is_taken_over(
    manager: ClusterManager, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = await launch(manager, 1)
    await manager.remove_subs(session.id)
    monkeypatch.setattr(drivers, "ENDING_GRACE", 0.0)
    await manager.refresh()
    assert manager.store.require(session.id).status is SessionStatus.TERMINATED
    assert not fake(manager).containers
