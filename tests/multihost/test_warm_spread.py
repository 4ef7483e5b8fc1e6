"""Warm sets spread over agents, on the README's Swarm (agent1 inits it, agent2 and
agent3 join as workers): a shape no agent holds alone is made ahead over the two
workers, on an overlay made through agent1, and a multi-node launch of that shape
takes it, reaching every container over SSH; nothing is left when it ends."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from jupyter_cluster.core.naming import LABEL_WARM
from jupyter_cluster.core.state import SessionStatus

from .agents import AgentCluster
from .support import SMALL, close_engine, engine, exec_output, leftovers

pytestmark = pytest.mark.docker


async def test_a_multi_node_launch_takes_a_warm_set_spread_over_the_workers(
    tmp_path: Path, agents: AgentCluster
) -> None:
    configs = [
        agents["agent1"].config(cpu=0.1, mem="4g"),  # the manager: room for nothing
        agents["agent2"].config(cpu=1, mem="4g"),
        agents["agent3"].config(cpu=1, mem="4g"),
    ]
    mgr = engine(tmp_path, agents, agent_configs=configs, warm_pool=[{**SMALL, "size": 3}])
    try:
        assert await mgr.warm.fill() == 1
        (ready,) = mgr.warm.table.ready()
        assert ready.layout == ("agent2", "agent2", "agent3")
        made = mgr.warm.table.containers_of(ready.set_id)
        assert warm_containers(agents) == {"agent1": 0, "agent2": 2, "agent3": 1}
        spec = mgr.make_spec(size=3, mode="multi-node", **SMALL)
        session = await asyncio.wait_for(mgr.launch(spec), 240)
        assert session.status is SessionStatus.RUNNING
        assert {c.container_id for c in session.containers} == made
        driver = agents["agent1"].docker(
            "network", "inspect", "--format", "{{.Driver}}", session.network
        )
        assert driver.stdout.strip() == "overlay", driver
        for dst in ("sub1", "sub2"):
            assert await exec_output(mgr, session.id, "main1", "ssh", dst, "hostname") == dst
        env = await exec_output(mgr, session.id, "sub2", "printenv", "BACKENDAI_CLUSTER_HOSTS")
        assert env == "main1,sub1,sub2"
        await mgr.terminate(session.id)
        assert mgr.warm.table.ready() == []
        await mgr.warm.drain()
        assert mgr.warm.table.known() == (set(), set())
    finally:
        await mgr.warm.drain()
        manager_id = await close_engine(mgr)
    assert leftovers(agents, manager_id) == {}


def warm_containers(agents: AgentCluster) -> dict[str, int]:
    """How many warm containers each agent runs (docker CLI)."""
    label = f"label={LABEL_WARM}"
    return {a.id: len(a.docker("ps", "-q", "--filter", label).stdout.split()) for a in agents}
