"""The local agent reads a container's CPU time from this machine's cgroup files,
and that agrees with what Docker itself reports (its one-shot stats read)."""

from __future__ import annotations

import asyncio
import subprocess

import pytest

from jupyter_cluster.core.naming import DEFAULT_IMAGE
from jupyter_cluster.engine.agents.base import AgentConfig
from jupyter_cluster.engine.agents.docker import host_cgroup
from jupyter_cluster.engine.agents.docker.agent import DockerAgent

#: Burns about 0.5 s of CPU, then waits to be removed.
BURN = "import time\nwhile time.process_time() < 0.5:\n    pass\ntime.sleep(60)\n"


async def test_the_host_counter_is_dockers_counter() -> None:
    cid = subprocess.run(
        ["docker", "run", "-d", "--rm", "--entrypoint", "python3", DEFAULT_IMAGE, "-c", BURN],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    agent = DockerAgent(AgentConfig(id="cgroup-probe"))
    try:
        assert agent.config.is_this_machine
        for _ in range(100):  # until the burn is done
            docker_says = await agent._stats_cpu_seconds(cid)
            if docker_says >= 0.5:
                break
            await asyncio.sleep(0.1)
        here = host_cgroup.cpu_seconds(cid)
        assert here is not None, "this machine's cgroup tree has no cgroup of the container"
        assert here == pytest.approx(docker_says, abs=0.05)
        assert await agent.cpu_seconds(cid) == pytest.approx(here, abs=0.05)
    finally:
        subprocess.run(["docker", "rm", "-f", cid], capture_output=True, check=False)
        await agent.close()
    assert host_cgroup.cpu_seconds(cid) is None  # removed: no cgroup, the caller asks Docker
