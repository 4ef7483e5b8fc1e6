"""A group's MTU on the Swarm overlay of a session that spans agents.

The local engine's test (``tests/integration/test_fast_network.py``) covers the
bridge network and RDMA; here the overlay driver, across Docker-in-Docker agents,
takes the same option as the MTU of the links between the agents, as Docker (and
Backend.AI, which passes it the same way) means it: every container, on either
agent, gets that less the VXLAN header, and SSH between agents still works.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from traitlets.config import Config

from jupyter_cluster.core import naming
from jupyter_cluster.core.fast_network import MTU_OPTION

from .agents import AgentCluster
from .support import SMALL, close_engine, engine, exec_output, leftovers

pytestmark = pytest.mark.docker
GROUPS = {"default": {"mtu": 1400}}
VXLAN_HEADER = 50  # what the overlay driver takes off for the containers' interfaces


async def test_an_overlay_across_agents_has_the_groups_mtu(
    tmp_path: Path, agents: AgentCluster
) -> None:
    manager = engine(
        tmp_path, agents, config=Config({"FastNetworking": {"resource_groups": GROUPS}})
    )
    await manager.start()
    try:
        spec = manager.make_spec(size=3, mode="multi-node", **SMALL)
        session = await asyncio.wait_for(manager.launch(spec), 240)
        by_host = {c.host: c.agent for c in session.containers}
        assert by_host["main1"] != by_host["sub2"], by_host
        for host in ("main1", "sub2"):
            mtu = await exec_output(manager, session.id, host, "cat", "/sys/class/net/eth0/mtu")
            assert int(mtu) == 1400 - VXLAN_HEADER
        assert await exec_output(manager, session.id, "main1", "ssh", "sub2", "hostname") == "sub2"
        inspect = agents[by_host["main1"] or ""].docker(
            "network", "inspect", "--format", "{{json .Options}}", naming.network_name(session)
        )
        assert f'"{MTU_OPTION}":"1400"' in inspect.stdout
    finally:
        manager_id = await close_engine(manager)
    assert leftovers(agents, manager_id) == {}
