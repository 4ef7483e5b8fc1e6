"""Losing an agent mid-session, for real: its Docker engine is stopped (issue #22: 5).

The engine stopped is the ``dockerd`` of a Docker-in-Docker agent of the ``agents``
fixture (agent1 the Swarm's manager, agent2 and agent3 workers). ``dockerd`` is the
agent container's PID 1, so stopping the container stops the engine as a service
manager does, and starting it runs the agent's entrypoint again: the same address and
``/var/lib/docker`` (a volume, with the node's Swarm state in it).

- A multi-node session spans the manager and a worker; the worker's engine stops.
  Reconciliation makes the session RUNNING_DEGRADED naming the lost container, and
  main1 still answers. Terminating it returns at once: nothing of it is left running
  on the manager and its capacity there is free again, while the session stays
  TERMINATING saying it waits for agent2 (the overlay network stays too: Swarm
  refuses to remove it while the lost worker's container holds it). The worker
  comes back, rejoins the Swarm by itself as a worker, and the next reconciliation
  removes its container and the network: nothing is left anywhere, TERMINATED.
- A multi-node session runs on the two workers; the manager's engine stops. The
  session keeps running (main1 answers, ``ssh sub1`` across the overlay works), and
  a new launch that must span the workers waits, its reason naming agent1 as not
  answering; when the manager is back, that launch runs.

Whatever happens, every agent's engine answers again afterwards and the Swarm is
as before (the fixture is shared by the whole test session).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from jupyter_cluster.core.state import ContainerStatus, SessionStatus
from jupyter_cluster.engine.manager import ClusterManager
from tests.support.constants import LABEL_MANAGER
from tests.support.waiting import eventually, wait_for

from .agents import AgentCluster, AgentHost
from .dockercli import docker
from .support import SMALL, engine, leftovers
from .swarm import manager_status

pytestmark = pytest.mark.docker

#: Seconds an agent's engine may take to stop its containers and exit.
STOP_TIMEOUT = 30


def swarm_as_before(agents: AgentCluster) -> bool:
    """agent1 leads, agent2 and agent3 are workers, and every node is Ready."""
    roles = {a: s.strip() for a, s in manager_status(agents["agent1"]).items()}
    return roles == {"agent1": "Leader", "agent2": "", "agent3": ""} and set(
        agents.swarm_nodes().values()
    ) == {"Ready"}


class Outages:
    """Stops agents' engines for a test and starts them again (see :func:`outages`)."""

    def __init__(self, agents: AgentCluster) -> None:
        self.agents = agents
        self.stopped: list[AgentHost] = []

    def stop(self, agent: AgentHost) -> None:
        """Stop ``agent``'s engine (its container, whose PID 1 is dockerd)."""
        self.stopped.append(agent)
        docker("stop", "-t", str(STOP_TIMEOUT), agent.container, timeout=STOP_TIMEOUT + 60)
        state = docker("inspect", "--format", "{{.State.Running}}", agent.container)
        assert state.stdout.strip() == "false", state

    def start(self, agent: AgentHost, timeout: float = 90) -> None:
        """Start ``agent``'s engine again (the entrypoint runs dockerd as before) and
        wait until it answers and the Swarm is as the fixture made it."""
        docker("start", agent.container, check=False)
        wait_for(lambda: agent.answers(), timeout, f"{agent.id}'s engine", 0.3, agent.logs)
        if agent in self.stopped:
            self.stopped.remove(agent)
        wait_for(
            lambda: swarm_as_before(self.agents),
            timeout,
            "the Swarm as before (agent1 leading, agent2 and agent3 workers, all Ready)",
            seen=lambda: (manager_status(self.agents["agent1"]), self.agents.swarm_nodes()),
        )


@pytest.fixture
def outages(agents: AgentCluster) -> Iterator[Outages]:
    """Stop engines with it; every stopped one is started again after the test."""
    assert agents.storage == "volume", (
        "stopping an agent's engine needs its /var/lib/docker on a volume "
        "(a tmpfs is emptied when the agent's container stops)"
    )
    assert swarm_as_before(agents), manager_status(agents["agent1"])
    control = Outages(agents)
    yield control
    for agent in list(control.stopped):
        control.start(agent)


def remove_leftovers(agents: AgentCluster, manager_id: str) -> None:
    """Remove whatever of ``manager_id`` a failed test left on the agents."""
    label = f"label={LABEL_MANAGER}={manager_id}"
    for agent in agents:
        for container in agent.docker("ps", "-aq", "--filter", label).stdout.split():
            agent.docker("rm", "-f", "-v", container)
        for network in agent.docker("network", "ls", "-q", "--filter", label).stdout.split():
            agent.docker("network", "rm", network)


async def said(mgr: ClusterManager, session_id: str, host: str, *cmd: str) -> tuple[int, str]:
    """Run ``cmd`` in ``host`` of the session: (exit code, what it printed)."""
    out = bytearray()

    def heard(_: int, data: bytes) -> None:
        out.extend(data)

    code = await asyncio.wait_for(mgr.exec(session_id, host, list(cmd), on_output=heard), 60)
    return code, out.decode().strip()


async def answers(mgr: ClusterManager, agent_id: str) -> bool:
    """Whether ``agent_id`` answers the engine now."""
    rows = {r["id"]: r for r in await mgr.agents_info()}
    return bool(rows[agent_id]["reachable"])


async def test_a_lost_worker_degrades_the_session_and_is_cleaned_when_it_answers_again(
    tmp_path: Path, agents: AgentCluster, outages: Outages
) -> None:
    manager, worker = agents["agent1"], agents["agent2"]
    configs = [manager.config(cpu=0.5, mem="4g"), worker.config(cpu=0.5, mem="4g")]
    mgr = engine(tmp_path, agents, agent_configs=configs)
    label = f"label={LABEL_MANAGER}={mgr.store.manager_id}"
    try:
        spec = mgr.make_spec(size=2, mode="multi-node", **SMALL)
        session = await asyncio.wait_for(mgr.launch(spec), 240)
        where = {c.host: c.agent for c in session.containers}
        assert where == {"main1": "agent1", "sub1": "agent2"}, where

        outages.stop(worker)
        await asyncio.wait_for(mgr.refresh(), 30)
        down = await mgr.get(session.id)
        assert down.status is SessionStatus.RUNNING_DEGRADED, down
        assert down.status_reason.startswith("sub1 lost: agent agent2 is unavailable")
        assert "main1" not in down.status_reason, down.status_reason
        assert await said(mgr, session.id, "main1", "hostname") == (0, "main1")

        began = time.monotonic()
        ending = await asyncio.wait_for(mgr.terminate(session.id), 60)
        took = time.monotonic() - began
        assert took < 20, f"terminate waited {took:.1f} s for the lost agent"
        assert ending.status is SessionStatus.TERMINATING, ending
        assert "waiting for agent2" in ending.status_reason
        assert "sub1 on agent2" in ending.status_reason, ending.status_reason
        hosts = {c.host: c.status for c in ending.containers}
        assert hosts["main1"] is ContainerStatus.TERMINATED, hosts
        assert manager.docker("ps", "-aq", "--filter", label).stdout.split() == []
        # The overlay stays: Swarm refuses while the lost worker's sub1 holds it.
        nets = manager.docker("network", "ls", "--format", "{{.Name}}", "--filter", label)
        assert nets.stdout.split() in ([], [f"jc-{session.id[:12]}"]), nets.stdout
        rows = {r["id"]: r for r in await mgr.agents_info()}
        assert rows["agent1"]["allocated"]["cpu"] == 0, rows["agent1"]
        await asyncio.wait_for(mgr.refresh(), 30)  # while lost: nothing more to do
        assert (await mgr.get(session.id)).status is SessionStatus.TERMINATING

        outages.start(worker)  # rejoins the Swarm as a worker by itself
        swarm = worker.inside("docker", "info", "--format", "{{.Swarm.LocalNodeState}}")
        assert swarm.stdout.strip() == "active", swarm
        assert worker.docker("ps", "-aq", "--filter", label).stdout.split(), "sub1 is kept"
        await eventually(lambda: answers(mgr, "agent2"), 60, "agent2 to answer the engine")
        await asyncio.wait_for(mgr.refresh(), 60)
        ended = await mgr.get(session.id)
        assert ended.status is SessionStatus.TERMINATED, ended
        assert leftovers(agents, mgr.store.manager_id) == {}
    finally:
        for agent in list(outages.stopped):
            outages.start(agent)
        remove_leftovers(agents, mgr.store.manager_id)
        await mgr.close()


async def test_a_lost_manager_leaves_worker_sessions_running_and_new_spans_wait(
    tmp_path: Path, agents: AgentCluster, outages: Outages
) -> None:
    manager = agents["agent1"]
    configs = [
        manager.config(cpu=0.1, mem="4g"),  # no room: sessions land on the workers
        agents["agent2"].config(cpu=0.75, mem="4g"),
        agents["agent3"].config(cpu=0.75, mem="4g"),
    ]
    mgr = engine(tmp_path, agents, agent_configs=configs)
    driving: asyncio.Future[object] | None = None
    try:
        spec = mgr.make_spec(size=2, mode="multi-node", **SMALL)
        running = await asyncio.wait_for(mgr.launch(spec), 240)
        assert {c.agent for c in running.containers} == {"agent2", "agent3"}

        outages.stop(manager)
        await asyncio.wait_for(mgr.refresh(), 30)
        still = await mgr.get(running.id)
        assert (still.status, still.status_reason) == (SessionStatus.RUNNING, "")
        assert await said(mgr, running.id, "main1", "hostname") == (0, "main1")
        assert await said(mgr, running.id, "main1", "ssh", "sub1", "hostname") == (0, "sub1")

        # 0.25 CPU is left on each worker: two more containers must span them.
        waiting = await mgr.submit(mgr.make_spec(size=2, mode="multi-node", cpu=0.25, mem="256m"))
        driving = asyncio.ensure_future(mgr.drive(waiting.id))

        async def reason() -> str:
            return (await mgr.get(waiting.id)).status_reason

        why = await eventually(reason, 30, "a reason for the waiting launch")
        assert (await mgr.get(waiting.id)).status is SessionStatus.PENDING
        assert "agents not answering now: agent1" in why, why
        assert "not reachable agents here" in why, why

        outages.start(manager)
        placed = await asyncio.wait_for(driving, 120)
        assert isinstance(placed, type(running)) and placed.status is SessionStatus.RUNNING
        assert {c.agent for c in placed.containers} == {"agent2", "agent3"}
        for session in (running, placed):
            await asyncio.wait_for(mgr.terminate(session.id), 120)
        assert leftovers(agents, mgr.store.manager_id) == {}
    finally:
        if driving is not None and not driving.done():
            driving.cancel()
            await asyncio.gather(driving, return_exceptions=True)
        for agent in list(outages.stopped):
            outages.start(agent)
        remove_leftovers(agents, mgr.store.manager_id)
        await mgr.close()
