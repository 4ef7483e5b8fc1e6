"""An agent's Docker engine restarted under a running session (issue #11: 5).

The host's own engine is never touched: the engine restarted is the ``dockerd`` of a
Docker-in-Docker agent (``agents`` fixture). ``dockerd`` is the agent container's
PID 1, so stopping the container is stopping the engine the way a service manager
does (SIGTERM: the engine stops its containers, which have no restart policy), and
starting it again brings the engine back on the same address with the same
``/var/lib/docker`` (a named volume). While it is down, the store-backed calls
(``list``/``get``) answer at once, the agent is shown unreachable within the
configured timeouts and a reconciliation degrades the session with the reason.
Once it is back, reconciliation finds the session's containers exited: the session
stays RUNNING_DEGRADED (its logs can still be read), each container EXITED with its
exit code, and terminate removes every container and the network from the agent.
The session's reason should then name the exited containers; today it keeps the
"agent unavailable" reason of the outage (a known bug: the test reports XFAIL for
that last check until reconciliation refreshes the reason, then it passes).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from jupyter_cluster.core.state import ContainerStatus, SessionStatus
from jupyter_cluster.engine.manager import ClusterManager
from tests.support.constants import READY
from tests.support.waiting import eventually

from .agents import AgentCluster, AgentHost
from .dockercli import docker
from .support import SMALL, engine, leftovers
from .swarm import all_ready, rejoin

pytestmark = pytest.mark.docker

#: The agent whose engine is restarted (agent1 serves TLS; any agent would do).
AGENT = "agent2"
#: Seconds the engine may take to stop its containers and exit.
STOP_TIMEOUT = 30
#: Seconds the restarted agent gets to be Ready in the Swarm again, before and after
#: it is made to rejoin.
READY_TIMEOUT = 60

log = logging.getLogger(__name__)


def start_engine(agent: AgentHost, timeout: float = 90) -> None:
    """Start the agent's container (its dockerd) and wait until the engine answers."""
    docker("start", agent.container, check=False)
    deadline = time.monotonic() + timeout
    while not agent.answers():
        if time.monotonic() > deadline:
            pytest.fail(f"{agent.id}'s engine did not come back; its log ends:\n{agent.logs()}")
        time.sleep(0.3)


async def reachable(mgr: ClusterManager) -> bool:
    """Whether the manager's only agent answers it (within its timeouts)."""
    (row,) = await mgr.agents_info()
    return bool(row["reachable"])


@pytest.fixture
def restartable(agents: AgentCluster) -> Iterator[AgentHost]:
    """The agent to restart; its engine answers again after the test, whatever happened
    (the ``agents`` fixture is shared by the whole test session), and it is Ready in the
    Swarm again, for the tests after this one launch on it.

    A worker restarted on a loaded machine once stayed Down for minutes (CI, parallel
    phase); the later multi-node launches then waited on it. If it is not Ready in
    :data:`READY_TIMEOUT` s, it is made to rejoin, as an admin would, with what it
    reported logged."""
    assert agents.storage == "volume", (
        "restarting an agent's engine needs its /var/lib/docker on a volume "
        "(a tmpfs is emptied when the agent's container stops)"
    )
    agent = agents[AGENT]
    yield agent
    start_engine(agent)
    manager = agents["agent1"]
    if all_ready(manager, READY_TIMEOUT):
        return
    swarm = agent.inside("docker", "info", "--format", "{{json .Swarm}}").stdout.strip()
    log.warning(
        "%s is not Ready in the Swarm %g s after its engine came back (%s); its swarm: %s; "
        "its log ends:\n%s; making it rejoin",
        agent.id, READY_TIMEOUT, agents.swarm_nodes(), swarm, agent.logs(),
    )  # fmt: skip
    rejoin(manager, agent)
    if not all_ready(manager, READY_TIMEOUT):
        pytest.fail(
            f"{agent.id} is not Ready in the Swarm even after rejoining: "
            f"{agents.swarm_nodes()}; its log ends:\n{agent.logs()}"
        )


def remove_leftovers(agent: AgentHost, manager_id: str) -> None:
    """Remove whatever of ``manager_id`` a failed test left on ``agent``."""
    label = f"label=jupyter-cluster.manager-id={manager_id}"
    for container in agent.docker("ps", "-aq", "--filter", label).stdout.split():
        agent.docker("rm", "-f", "-v", container)
    for network in agent.docker("network", "ls", "-q", "--filter", label).stdout.split():
        agent.docker("network", "rm", network)


async def test_an_engine_restart_degrades_the_session_and_terminate_cleans_up(
    tmp_path: Path, agents: AgentCluster, restartable: AgentHost
) -> None:
    agent = restartable
    mgr = engine(tmp_path, agents, agent_configs=[agent.config(cpu=1, mem="4g")], docker_timeout=3)
    try:
        session = await asyncio.wait_for(mgr.launch(mgr.make_spec(size=2, **SMALL)), 240)
        assert session.status is SessionStatus.RUNNING

        docker("stop", "-t", str(STOP_TIMEOUT), agent.container, timeout=STOP_TIMEOUT + 60)
        began = time.monotonic()
        assert [s.id for s in await mgr.list()] == [session.id]
        assert (await mgr.get(session.id)).status is SessionStatus.RUNNING
        assert time.monotonic() - began < 1, "the store-backed calls waited for the agent"
        (row,) = await mgr.agents_info()
        assert row["reachable"] is False and AGENT in str(row["message"]), row
        await asyncio.wait_for(mgr.refresh(), 30)
        assert time.monotonic() - began < 20, "an unreachable agent stalled the calls"
        down = await mgr.get(session.id)
        assert down.status is SessionStatus.RUNNING_DEGRADED, down
        assert AGENT in down.status_reason

        start_engine(agent)
        await eventually(lambda: reachable(mgr), 60, f"{AGENT} to answer the manager again")
        await asyncio.wait_for(mgr.refresh(), 60)
        back = await mgr.get(session.id)
        assert back.status is SessionStatus.RUNNING_DEGRADED, back
        for container in back.containers:
            assert container.status is ContainerStatus.EXITED, container
            assert "exit code" in container.status_reason, container
        dead = "; ".join(f"{c.host} {c.status_reason}" for c in back.containers)
        assert back.status_reason == dead  # not the outage's reason any more
        assert [s.id for s in await mgr.list()] == [session.id]
        # Degraded, not ended: the exited containers' logs can still be read.
        log = [line async for line in mgr.logs(session.id, "main1", tail=200)]
        assert any(line.startswith(READY) for line in log), log

        ended = await asyncio.wait_for(mgr.terminate(session.id), 120)
        assert ended.status is SessionStatus.TERMINATED
        assert leftovers(agents, mgr.store.manager_id) == {}
    finally:
        remove_leftovers(agent, mgr.store.manager_id)
        await mgr.close()
