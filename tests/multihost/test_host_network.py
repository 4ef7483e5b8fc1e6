"""A host-network resource group across Docker-in-Docker agents.

With ``host_network`` a group's containers run in their agents' own network
namespaces, one per agent: here each agent's is its Docker-in-Docker container's,
so a container's interface carries its agent's address. No session network is
made, yet each container keeps its hostname, ``ssh sub1`` works from main1
(through ``/etc/hosts`` naming the other agent), the cluster environment and the
hostfile are as on a bridge; an agent already holding a container makes the next
session wait with a reason; a kernel runs in main1 and answers over SSH; nothing
is left afterwards. The agents are not Swarm nodes for this: none is needed.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import AsyncKernelManager
from traitlets.config import Config

from jupyter_cluster.core import naming
from jupyter_cluster.core.models import LaunchSpec
from jupyter_cluster.core.state import SessionStatus
from jupyter_cluster.provisioning import kernelspec
from tests.support.kernels import run_cell, start_client

from .agents import AgentCluster
from .support import SMALL, close_engine, engine, exec_output, leftovers

pytestmark = pytest.mark.docker
GROUPS = {"FastNetworking": {"resource_groups": {"default": {"host_network": True}}}}


async def test_a_session_spans_agents_on_their_own_networks(
    tmp_path: Path, agents: AgentCluster
) -> None:
    two = [agents["agent1"], agents["agent2"]]
    manager = engine(
        tmp_path,
        agents,
        agent_configs=[a.config(cpu=1, mem="4g") for a in two],
        config=Config(GROUPS),
    )
    await manager.start()
    try:
        spec = manager.make_spec(size=2, mode="multi-node", **SMALL)
        session = await asyncio.wait_for(manager.launch(spec), 240)
        by_host = {c.host: c.agent or "" for c in session.containers}
        assert set(by_host.values()) == {"agent1", "agent2"}, by_host
        for host, agent_id in by_host.items():
            assert await exec_output(manager, session.id, host, "hostname") == host
            addresses = await exec_output(manager, session.id, host, "ip", "-4", "-o", "addr")
            assert f" {agents[agent_id].ip}/" in addresses, addresses  # the agent's own
        assert await exec_output(manager, session.id, "main1", "ssh", "sub1", "hostname") == "sub1"
        env = await exec_output(manager, session.id, "sub1", "env")
        assert "BACKENDAI_CLUSTER_HOST=sub1" in env and "BACKENDAI_CLUSTER_SIZE=2" in env
        hostfile = await exec_output(manager, session.id, "main1", "cat", "/home/config/hostfile")
        assert hostfile.split()[:1] == ["main1"] and "sub1" in hostfile
        name = naming.network_name(session)
        for agent in two:
            assert name not in agent.docker("network", "ls", "--format", "{{.Name}}").stdout

        waiting = await manager.submit(manager.make_spec(size=1, **SMALL))
        assert waiting.status is SessionStatus.PENDING
        assert "runs a host-network container" in waiting.status_reason, waiting.status_reason
        await manager.terminate(waiting.id)
    finally:
        manager_id = await close_engine(manager)
    assert leftovers(agents, manager_id) == {}


async def test_a_kernel_runs_in_a_host_network_main1(tmp_path: Path, agents: AgentCluster) -> None:
    spec = LaunchSpec.create(
        image=naming.DEFAULT_IMAGE, size=2, mode="multi-node", cpu=0.5, mem="512m"
    )
    kernels = tmp_path / "kernels" / "hostnet"
    kernels.mkdir(parents=True)
    config = kernelspec.provisioner_config(spec, False, 240.0)
    (kernels / "kernel.json").write_text(json.dumps(kernelspec.kernel_json("Hostnet", config)))
    engine_config = {
        "agents": [agents[a].config(cpu=1, mem="4g") for a in ("agent1", "agent2")],
        "db_path": str(tmp_path / "cluster.db"),
        "data_root": agents.data_root,
        "docker_timeout": 20.0,
    }
    km = AsyncKernelManager(
        kernel_name="hostnet",
        kernel_spec_manager=KernelSpecManager(kernel_dirs=[str(kernels.parent)]),
        config=Config({"ClusterManager": engine_config, **GROUPS}),
    )
    kc = await start_client(km)
    provisioner: Any = km.provisioner
    manager_id = provisioner.engine.store.manager_id
    try:
        cell = await run_cell(
            kc,
            "import socket, subprocess\nprint(socket.gethostname())\n"
            "ssh = subprocess.run(['ssh', 'sub1', 'hostname'], capture_output=True, text=True)\n"
            "print(ssh.stdout)",
            timeout=60,
        )
        assert cell.stdout.split() == ["main1", "sub1"], cell
        session = await provisioner.engine.get(provisioner.session_id)
        main = session.containers[0]
        inspect = agents[main.agent or ""].docker(
            "inspect", "--format", "{{.HostConfig.NetworkMode}}", main.container_id or ""
        )
        assert inspect.stdout.strip() == "host"
        # Over SSH the kernel listens on Unix sockets inside main1: no TCP port of
        # the agent's host (whose network main1 shares) is open to its other users.
        engine = provisioner.engine
        tcp = await exec_output(engine, session.id, "main1", "ss", "-Hltn")
        listening = {int(line.split()[3].rsplit(":", 1)[1]) for line in tcp.splitlines()}
        assert naming.SSH_PORT in listening and not listening & set(naming.KERNEL_PORTS), tcp
        unix = await exec_output(engine, session.id, "main1", "ss", "-Hlx")
        assert all(path in unix for path in naming.kernel_sockets(km.kernel_id)), unix
    finally:
        kc.stop_channels()
        if km.has_kernel:
            await km.shutdown_kernel(now=True)
    assert leftovers(agents, manager_id) == {}
