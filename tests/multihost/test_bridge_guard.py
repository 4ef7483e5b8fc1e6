"""The guard of session bridges on agent hosts of a Swarm (multi-node sessions).

A container of a multi-node session is on the session's overlay, which its agent
host does not route, and on ``docker_gwbridge`` (its way out), which the host does.
Here, on the Docker-in-Docker agent running main1 of a session spanning two agents,
``nobody`` (``setpriv``, bash's ``/dev/tcp``) is refused by a listener in main1
through main1's ``docker_gwbridge`` address while root on that host reaches it; the
guard was put on both placed agents by a helper that is gone afterwards.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from jupyter_cluster.core.host_guard import GUARD_CHAIN
from jupyter_cluster.engine.agents.host_guard import HELPER_LABELS

from .agents import AgentCluster, AgentHost
from .support import SMALL, close_engine, engine, exec_output, leftovers

pytestmark = pytest.mark.docker

PORT = 8123


def reach(agent: AgentHost, address: str, as_nobody: bool) -> str:
    """Whether a process on ``agent``'s host reaches ``address:PORT``, as root or
    ``nobody``: "reached" or "refused"."""
    probe = f"exec 3<>/dev/tcp/{address}/{PORT} && echo reached || echo refused"
    user = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] if as_nobody else []
    return agent.inside(*user, "bash", "-c", probe, timeout=30).stdout.strip()


def gwbridge_address(agent: AgentHost, container_id: str) -> str:
    """The address of ``container_id`` on ``docker_gwbridge`` of ``agent``."""
    out = agent.docker("network", "inspect", "docker_gwbridge", "--format", "{{json .Containers}}")
    containers = json.loads(out.stdout)
    return str(containers[container_id]["IPv4Address"]).split("/")[0]


async def test_another_user_of_an_agent_host_cannot_connect_into_a_multi_node_session(
    tmp_path: Path, agents: AgentCluster
) -> None:
    mgr = engine(tmp_path, agents)
    try:
        spec = mgr.make_spec(size=3, mode="multi-node", **SMALL)
        session = await asyncio.wait_for(mgr.launch(spec), 240)
        placed = {c.agent for c in session.containers}
        assert len(placed) == 2, placed
        main = session.containers[0]
        host = agents[main.agent or ""]
        server = f"nohup python3 -m http.server {PORT} >/dev/null 2>&1 &"
        await exec_output(mgr, session.id, "main1", "sh", "-c", server)
        address = gwbridge_address(host, main.container_id or "")
        for _ in range(50):
            if reach(host, address, as_nobody=False) == "reached":
                break
            await asyncio.sleep(0.2)
        assert reach(host, address, as_nobody=False) == "reached"
        assert reach(host, address, as_nobody=True) == "refused"
        for agent_id in placed:
            rules = agents[agent_id or ""].inside("iptables", "-S", "OUTPUT").stdout
            assert f"-A OUTPUT -o docker_gwbridge -j {GUARD_CHAIN}" in rules, (agent_id, rules)
        ((label, value),) = HELPER_LABELS.items()
        for agent in agents:  # the helpers removed themselves
            assert agent.docker("ps", "-aq", "--filter", f"label={label}={value}").stdout == ""
    finally:
        manager_id = await close_engine(mgr)
    assert leftovers(agents, manager_id) == {}
