"""The OOM watch with a fake agent (#14 item 2): an out-of-memory kill inside a container
that runs on is recorded on that container only (count, time, reason), the session
stays RUNNING; streams that fail or end are followed again, without losing the kills
that happened meanwhile; stopping ends the followers."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from jupyter_cluster.core.models import Session
from jupyter_cluster.core.naming import DEFAULT_IMAGE, LABEL_MANAGER
from jupyter_cluster.core.resources import Resources
from jupyter_cluster.core.state import ContainerStatus, SessionStatus, oom_reason
from jupyter_cluster.engine.agents.base import ContainerSpec, OomEvent
from jupyter_cluster.engine.agents.fake import FakeAgent
from jupyter_cluster.engine.manager import ClusterManager
from jupyter_cluster.engine.oom_watch import OomWatch
from jupyter_cluster.errors import AgentError
from tests.support.waiting import eventually

AT = 1796108020.0  # 2026-12-01T06:53:40Z
MIB = 1024**2


@pytest.fixture
async def setup(tmp_path: Path) -> AsyncIterator[tuple[ClusterManager, FakeAgent, Session]]:
    """A manager on one fake agent, and a RUNNING size-3 session of 64m per container."""
    agent = FakeAgent("a1", ready_on_start=True)
    manager = ClusterManager(
        db_path=str(tmp_path / "cluster.db"),
        data_root=str(tmp_path / "folders"),
        agents=[{"id": "a1"}],
        agent_factory=lambda config: agent,
    )
    session = await manager.launch(
        manager.make_spec(image=DEFAULT_IMAGE, size=3, cpu=0.25, mem="64m")
    )
    assert session.status is SessionStatus.RUNNING
    yield manager, agent, session
    await manager.terminate(session.id)
    await manager.close()


def cid(session: Session, host: str) -> str:
    return session.locate(host).container_id or ""


async def kills(manager: ClusterManager, session: Session, host: str, count: int) -> Session:
    """The session once ``host`` has ``count`` recorded kills."""

    async def probe() -> Session | None:
        now = await manager.get(session.id)
        return now if now.locate(host).oom_kills == count else None

    return await eventually(probe, 5, f"{count} OOM kill(s) recorded on {host}", interval=0.01)


async def test_a_kill_marks_its_container_only_and_two_count_two(setup: tuple) -> None:
    manager, agent, session = setup
    pokes: list[None] = []
    watch = OomWatch(manager.store, manager.pool.agents, on_change=lambda: pokes.append(None))
    watch.start()
    await eventually(lambda: asyncio.sleep(0, ("oom_events", "") in agent.calls), 5, "a follower")
    # A container of this manager that no session knows (a warm one, say): ignored.
    mine = {LABEL_MANAGER: manager.store.manager_id}
    stray = await agent.create_container(spec("warm-main1", mine))
    await agent.start_container(stray)
    agent.oom(stray, AT - 1)
    agent.oom(cid(session, "sub1"), AT)
    after = await kills(manager, session, "sub1", 1)
    sub1 = after.locate("sub1")
    assert sub1.oom_killed_at == AT
    assert sub1.status is ContainerStatus.RUNNING
    assert sub1.status_reason == oom_reason(1, AT, 64 * MIB)
    assert "out-of-memory killer at 2026-12-01T06:53:40Z" in sub1.status_reason
    assert after.status is SessionStatus.RUNNING and after.status_reason == ""
    for host in ("main1", "sub2"):
        other = after.locate(host)
        assert (other.oom_kills, other.oom_killed_at, other.status_reason) == (0, None, "")
    assert len(pokes) == 1  # the stray kill changed nothing and poked nobody
    await manager.refresh()  # reconciliation leaves a running container's note alone
    assert (await manager.get(session.id)).locate("sub1") == sub1

    agent.oom(cid(session, "sub1"), AT + 60)
    after = await kills(manager, session, "sub1", 2)
    assert after.locate("sub1").oom_killed_at == AT + 60
    assert "(2 so far)" in after.locate("sub1").status_reason
    assert len(pokes) == 2
    # The public shape carries it (REST, the CLI's --json).
    public = next(c for c in after.to_dict()["containers"] if c["host"] == "sub1")
    assert (public["oom_kills"], public["oom_killed_at"]) == (2, AT + 60)
    assert await watch.record("a1", OomEvent("no-such-container", AT)) is False
    await watch.stop()


async def test_an_exited_container_keeps_its_exit_reason(setup: tuple) -> None:
    manager, agent, session = setup
    agent.exit(cid(session, "sub2"), 137, oom=True)
    await manager.refresh()
    exited = (await manager.get(session.id)).locate("sub2")
    assert exited.status is ContainerStatus.EXITED
    watch = OomWatch(manager.store, manager.pool.agents)
    assert await watch.record("a1", OomEvent(cid(session, "sub2"), AT)) is True
    after = (await manager.get(session.id)).locate("sub2")
    assert after.oom_kills == 1
    assert after.status_reason == exited.status_reason
    assert after.status_reason.startswith("was killed by the out-of-memory killer (exit code 137)")


async def test_a_failing_stream_is_followed_again_and_misses_nothing(
    setup: tuple, caplog: pytest.LogCaptureFixture
) -> None:
    manager, agent, session = setup
    agent.fail_on["oom_events"] = AgentError("agent a1: cannot reach the engine", "a1")
    watch = OomWatch(manager.store, manager.pool.agents, retry=0.02, max_retry=0.1)
    with caplog.at_level(logging.INFO, logger="jupyter_cluster.engine.oom_watch"):
        watch.start()

        def tries() -> int:
            return agent.calls.count(("oom_events", ""))

        await eventually(lambda: asyncio.sleep(0, tries() >= 4), 5, "retries", interval=0.01)
        agent.oom(cid(session, "sub1"))  # while the stream is down
        del agent.fail_on["oom_events"]
        await kills(manager, session, "sub1", 1)  # asked for the kills since it went down
        warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
        assert len(warnings) == 1, warnings  # one warning for the whole outage
        assert "agent a1" in warnings[0].getMessage()

        def told() -> bool:  # logged right after the store was written: may come later
            infos = [r.getMessage() for r in caplog.records if r.levelno == logging.INFO]
            return any("sub1" in message for message in infos)

        await eventually(lambda: asyncio.sleep(0, told()), 5, "the kill's log line", interval=0.01)

        agent.oom(cid(session, "main1"))  # while the stream runs
        await kills(manager, session, "main1", 1)
        # The engine restarts: its stream ends; a kill meanwhile is still counted, and
        # those asked for again (the engine's "since" includes the last one seen) are not.
        before = tries()
        agent.end_streams()
        agent.oom(cid(session, "sub2"))
        await eventually(lambda: asyncio.sleep(0, tries() > before), 5, "a new follower")
        after = await kills(manager, session, "sub2", 1)
        assert (after.locate("sub1").oom_kills, after.locate("main1").oom_kills) == (1, 1)
        assert len([r for r in caplog.records if r.levelno == logging.WARNING]) == 1
    await watch.stop()


async def test_stop_cancels_the_followers(setup: tuple) -> None:
    manager, agent, session = setup
    watch = OomWatch(manager.store, manager.pool.agents)
    watch.start()
    await eventually(lambda: asyncio.sleep(0, ("oom_events", "") in agent.calls), 5, "a follower")
    tasks = list(watch._tasks)
    await watch.stop()
    assert tasks and all(t.cancelled() for t in tasks)
    agent.oom(cid(session, "sub1"), AT)
    for _ in range(20):
        await asyncio.sleep(0)
    assert (await manager.get(session.id)).locate("sub1").oom_kills == 0
    await watch.stop()  # again: nothing to do


def spec(name: str, labels: dict[str, str]) -> ContainerSpec:
    """A container spec made outside any session."""
    return ContainerSpec(
        name=name,
        image=DEFAULT_IMAGE,
        hostname="main1",
        network="n",
        aliases=(),
        env={},
        labels=labels,
        resources=Resources(),
        command=("sleep",),
    )


def test_docker_oom_events_are_read_from_their_json() -> None:
    """What the real agent asks Docker for, and how it reads the answer."""
    import json

    from jupyter_cluster.engine.agents.docker.events import oom_event, oom_query

    query = oom_query({LABEL_MANAGER: "m1"}, 1796108020.5)
    assert json.loads(query["filters"]) == {
        "type": ["container"],
        "event": ["oom"],
        "label": [f"{LABEL_MANAGER}=m1"],
    }
    assert query["since"] == "1796108020.500000000"
    assert "since" not in oom_query({}, None)
    raw = {"Type": "container", "Action": "oom", "id": "c1", "timeNano": 1796108020123456789}
    event = oom_event(raw)
    assert event is not None and event.container_id == "c1"
    assert event.time == pytest.approx(1796108020.123456789)
    assert oom_event({**raw, "Action": "die"}) is None
    assert oom_event("not an event") is None
