"""A launch whose session another process ends (``rm`` in a terminal) stops at once.

Two engines share one store, as a Jupyter server (or a detached driver) launching a
session and ``jupyter cluster rm`` in a terminal do. The launch waits for its
containers to say they are ready (the fake agent's never do) when the other engine
ends the session. The launch must then stop within a fraction of a second, remove
what it made, write nothing more into the ended session's record, and return the
session as the other process left it (TERMINATED, "terminated"): not fail with a
start-up error of its own, and not go on making and starting containers for a
session that is gone. A removal, for its part, returns only once the launch has
removed what it made, even what Docker was still making when the launch stopped.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from jupyter_cluster.core.naming import DEFAULT_IMAGE
from jupyter_cluster.core.state import ContainerStatus, SessionStatus
from jupyter_cluster.engine.agents.base import ContainerSpec
from jupyter_cluster.engine.agents.fake import FakeAgent
from jupyter_cluster.engine.manager import ClusterManager
from jupyter_cluster.engine.preparing import LEFT_POLL
from jupyter_cluster.errors import AgentError


def engine(tmp_path: Path, agent: FakeAgent) -> ClusterManager:
    """An engine of the store in ``tmp_path`` whose one agent is ``agent``."""
    return ClusterManager(
        db_path=str(tmp_path / "cluster.db"),
        data_root=str(tmp_path / "folders"),
        agent_factory=lambda config: agent,
    )


async def all_starting(launcher: ClusterManager, name: str) -> str:
    """Wait until every container of session ``name`` was started; its id."""
    while True:
        found = [s for s in launcher.store.list() if s.name == name]
        if found and all(c.status is ContainerStatus.STARTING for c in found[0].containers):
            return found[0].id
        await asyncio.sleep(0.01)


async def test_a_launch_stops_when_another_process_ends_its_session(tmp_path: Path) -> None:
    agent = FakeAgent("local", ready_on_start=False)  # nothing ever says it is ready
    launcher, remover = engine(tmp_path, agent), engine(tmp_path, agent)
    spec = launcher.make_spec(image=DEFAULT_IMAGE, size=3, cpu=0.5, mem="64m", name="train")
    launch = asyncio.ensure_future(launcher.launch(spec))
    session_id = await asyncio.wait_for(all_starting(launcher, "train"), 10)
    assert len(agent.containers) == 3 and agent.networks

    ended = await remover.terminate(session_id)
    assert ended.status is SessionStatus.TERMINATED
    asked = time.monotonic()
    stopped = await asyncio.wait_for(launch, 5)  # it would wait 300 s for readiness
    took = time.monotonic() - asked
    assert took < LEFT_POLL + 1.0, f"the launch went on for {took:.2f} s"

    assert stopped.status is SessionStatus.TERMINATED
    assert stopped.status_reason == "terminated"  # the remover's words, not a failure
    await asyncio.sleep(3 * LEFT_POLL)  # anything the launch still wrote would show now
    record = launcher.store.require(session_id)
    assert record.status is SessionStatus.TERMINATED and record.status_reason == "terminated"
    assert [c.status for c in record.containers] == [ContainerStatus.TERMINATED] * 3
    assert agent.containers == {} and agent.networks == {} and agent.volumes == {}
    starts = [name for call, name in agent.calls if call == "start_container"]
    assert len(starts) == 3  # nothing started after the removal
    await launcher.close()
    await remover.close()


async def test_a_launch_ended_elsewhere_before_its_containers_exist_makes_none(
    tmp_path: Path,
) -> None:
    """Ended while its network is still being made: no container is created after."""
    agent = FakeAgent("local", ready_on_start=True)
    gate = asyncio.Event()
    real_create_network = agent.create_network

    async def slow_network(*args: object, **kwargs: object) -> str:
        await gate.wait()
        return await real_create_network(*args, **kwargs)  # type: ignore[arg-type]

    agent.create_network = slow_network  # type: ignore[method-assign]
    launcher, remover = engine(tmp_path, agent), engine(tmp_path, agent)
    spec = launcher.make_spec(image=DEFAULT_IMAGE, size=4, cpu=0.5, mem="64m", name="early")
    launch = asyncio.ensure_future(launcher.launch(spec))

    async def preparing() -> str:
        while True:
            found = [s for s in launcher.store.list() if s.status is SessionStatus.PREPARING]
            if found:
                return found[0].id
            await asyncio.sleep(0.01)

    session_id = await asyncio.wait_for(preparing(), 10)
    # The removal waits for the launch, which waits for Docker's answer (the gate).
    removal = asyncio.ensure_future(remover.terminate(session_id))
    await asyncio.sleep(LEFT_POLL * 2)  # the launch has seen it by now
    gate.set()
    await asyncio.wait_for(removal, 5)
    stopped = await asyncio.wait_for(launch, 5)
    assert stopped.status is SessionStatus.TERMINATED
    await asyncio.sleep(0.2)
    assert agent.containers == {} and agent.networks == {} and agent.volumes == {}
    assert not [call for call, _ in agent.calls if call == "start_container"]
    await launcher.close()
    await remover.close()


def held_creation(agent: FakeAgent, hostname: str) -> tuple[asyncio.Event, asyncio.Event]:
    """Make ``agent``'s creation of ``hostname`` wait for a gate, as Docker's answer
    to a creation in flight; (asked: the creation was asked for, the gate)."""
    asked, gate = asyncio.Event(), asyncio.Event()
    real_create = agent.create_container

    async def create(spec: ContainerSpec) -> str:
        if spec.hostname == hostname:
            asked.set()
            await gate.wait()
        return await real_create(spec)

    agent.create_container = create  # type: ignore[method-assign]
    return asked, gate


def session_named(manager: ClusterManager, name: str) -> str:
    return next(s.id for s in manager.store.list() if s.name == name)


async def test_a_removal_returns_once_the_launch_removed_what_docker_was_still_making(
    tmp_path: Path,
) -> None:
    agent = FakeAgent("local", ready_on_start=False)
    asked, gate = held_creation(agent, "sub1")
    launcher, remover = engine(tmp_path, agent), engine(tmp_path, agent)
    spec = launcher.make_spec(image=DEFAULT_IMAGE, size=2, cpu=0.5, mem="64m", name="held")
    launch = asyncio.ensure_future(launcher.launch(spec))
    await asyncio.wait_for(asked.wait(), 10)
    removal = asyncio.ensure_future(remover.terminate(session_named(launcher, "held")))
    await asyncio.sleep(4 * LEFT_POLL)  # the launch has stopped: it waits for sub1
    assert not removal.done()  # sub1 is still being made: not removed yet
    gate.set()
    ended = await asyncio.wait_for(removal, 5)
    assert ended.status is SessionStatus.TERMINATED and ended.status_reason == "terminated"
    assert (await asyncio.wait_for(launch, 5)).status is SessionStatus.TERMINATED
    assert agent.containers == {} and agent.networks == {} and agent.volumes == {}
    await launcher.close()
    await remover.close()


async def test_a_launch_stopped_while_it_cleans_up_after_a_failure_cleans_up_to_the_end(
    tmp_path: Path,
) -> None:
    """main1 fails to start while sub1 is being made; the launch's clean-up waits for
    sub1 to remove it, and the session's removal elsewhere stops the launch then: the
    clean-up must not be cut short (a CI run left sub1 of a TERMINATED session)."""
    agent = FakeAgent("local", ready_on_start=False)
    asked, gate = held_creation(agent, "sub1")
    real_start = agent.start_container

    async def start(container_id: str) -> None:
        if agent.containers[container_id].spec.hostname == "main1":
            await asked.wait()
            raise AgentError("agent local: main1 would not start", "local")
        await real_start(container_id)

    agent.start_container = start  # type: ignore[method-assign]
    launcher, remover = engine(tmp_path, agent), engine(tmp_path, agent)
    spec = launcher.make_spec(image=DEFAULT_IMAGE, size=2, cpu=0.5, mem="64m", name="torn")
    launch = asyncio.ensure_future(launcher.launch(spec))
    await asyncio.wait_for(asked.wait(), 10)
    await asyncio.sleep(0.1)  # main1 failed: the launch cleans up, waiting for sub1
    removal = asyncio.ensure_future(remover.terminate(session_named(launcher, "torn")))
    await asyncio.sleep(4 * LEFT_POLL)  # the launch has seen the removal by now
    gate.set()
    await asyncio.wait_for(removal, 5)
    stopped = await asyncio.wait_for(launch, 5)
    assert stopped.status is SessionStatus.TERMINATED and stopped.status_reason == "terminated"
    await asyncio.sleep(0.1)  # a creation still in flight would show now
    assert agent.containers == {} and agent.networks == {} and agent.volumes == {}
    await launcher.close()
    await remover.close()
