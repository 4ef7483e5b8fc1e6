"""A launch whose session another process ends (``rm`` in a terminal) stops at once.

Two engines share one store, as a Jupyter server (or a detached driver) launching a
session and ``jupyter cluster rm`` in a terminal do. The launch waits for its
containers to say they are ready (the fake agent's never do) when the other engine
ends the session. The launch must then stop within a fraction of a second, remove
what it made, write nothing more into the ended session's record, and return the
session as the other process left it (TERMINATED, "terminated"): not fail with a
start-up error of its own, and not go on making and starting containers for a
session that is gone.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from jupyter_cluster.core.naming import DEFAULT_IMAGE
from jupyter_cluster.core.state import ContainerStatus, SessionStatus
from jupyter_cluster.engine.agents.fake import FakeAgent
from jupyter_cluster.engine.manager import ClusterManager
from jupyter_cluster.engine.preparing import LEFT_POLL


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
    await remover.terminate(session_id)
    await asyncio.sleep(LEFT_POLL * 2)  # the launch has seen it by now
    gate.set()
    stopped = await asyncio.wait_for(launch, 5)
    assert stopped.status is SessionStatus.TERMINATED
    await asyncio.sleep(0.2)
    assert agent.containers == {} and agent.networks == {} and agent.volumes == {}
    assert not [call for call, _ in agent.calls if call == "start_container"]
    await launcher.close()
    await remover.close()
