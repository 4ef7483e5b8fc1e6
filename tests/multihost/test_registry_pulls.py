"""Images reach the agents from a private registry (TLS, basic auth) during PREPARING.

- A first multi-node launch of an image no agent has pulls it on both of its agents
  (PULLING shown per container, a ``pull`` phase in its timings); a second launch
  of it pulls nothing.
- A wrong password, an unknown image and a registry that is down each end the
  launch in ERROR, saying which agent failed and what the registry answered, with
  nothing left on any agent.
- ``jupyter cluster image pull IMAGE --agent ID`` pre-pulls on one agent, and says
  so when the agent has it already.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from jupyter_cluster.core.models import Session
from jupyter_cluster.core.state import ContainerStatus, SessionStatus
from jupyter_cluster.errors import LaunchFailed
from tests.support.constants import IMAGE

from .agents import AgentCluster
from .registry import USER, PrivateRegistry
from .support import SMALL, engine, leftovers

pytestmark = pytest.mark.docker


@pytest.fixture(scope="module")
def registry(agents: AgentCluster) -> Iterator[PrivateRegistry]:
    """The private registry of this module, holding the kernel image."""
    started = PrivateRegistry(agents, IMAGE)
    try:
        yield started.start()
    finally:
        started.stop()


def credentials(registry: PrivateRegistry, password: str | None = None) -> dict:
    return {registry.host: {"username": USER, "password": password or registry.password}}


def two_agents(agents: AgentCluster) -> list[dict]:
    """agent1 (manager) and agent2 (worker), each with room for one SMALL container."""
    return [agents[a].config(cpu=0.5, mem="4g") for a in ("agent1", "agent2")]


async def test_a_first_launch_pulls_on_both_agents_and_a_second_does_not(
    tmp_path: Path, agents: AgentCluster, registry: PrivateRegistry
) -> None:
    mgr = engine(
        tmp_path,
        agents,
        agent_configs=two_agents(agents),
        registry_credentials=credentials(registry),
    )
    seen: list[Session] = []
    spec = mgr.make_spec(image=registry.image, size=2, mode="multi-node", **SMALL)
    first = await mgr.launch(spec, on_change=seen.append)
    try:
        assert first.status is SessionStatus.RUNNING
        assert {c.agent for c in first.containers} == {"agent1", "agent2"}
        pulled = {
            c.agent: c.status_reason
            for s in seen
            for c in s.containers
            if c.status is ContainerStatus.PULLING
        }
        assert set(pulled) == {"agent1", "agent2"}
        assert all(reason.startswith(f"agent {a} pulling") for a, reason in pulled.items())
        timings = mgr.store.require(first.id).timings
        assert timings["pull"] > 0
        for agent in ("agent1", "agent2"):
            assert agents[agent].docker("image", "inspect", registry.image).returncode == 0
    finally:
        await mgr.terminate(first.id)
    seen.clear()
    second = await mgr.launch(spec, on_change=seen.append)
    await mgr.terminate(second.id)
    assert second.status is SessionStatus.RUNNING
    assert not [c for s in seen for c in s.containers if c.status is ContainerStatus.PULLING]
    assert mgr.store.require(second.id).timings["pull"] < timings["pull"]
    manager_id = mgr.store.manager_id
    await mgr.close()
    assert leftovers(agents, manager_id) == {}


@pytest.mark.parametrize(
    ("case", "words"),
    [
        ("wrong password", ["could not pull", "unauthorized", "registry_credentials"]),
        ("unknown image", ["could not pull", "manifest unknown", "name and tag"]),
        ("registry down", ["could not pull", "connection refused", "up and reachable"]),
    ],
)
async def test_a_failed_pull_is_an_error_that_says_why_with_nothing_left(
    tmp_path: Path,
    agents: AgentCluster,
    registry: PrivateRegistry,
    case: str,
    words: list[str],
) -> None:
    image = {
        "wrong password": registry.image,
        "unknown image": f"{registry.host}/jc/nothing-here:1",
        "registry down": f"{registry.ip}:5999/jc/kernel:pulltest",  # nothing listens there
    }[case]
    password = "wrong" if case == "wrong password" else None
    mgr = engine(
        tmp_path,
        agents,
        agent_configs=[agents["agent3"].config(cpu=1, mem="4g")],
        registry_credentials=credentials(registry, password),
    )
    with pytest.raises(LaunchFailed) as failed:
        await mgr.launch(mgr.make_spec(image=image, size=1, **SMALL))
    ended = (await mgr.list(include_ended=True))[0]
    assert ended.status is SessionStatus.ERROR
    for word in ("agent agent3", image, *words):
        assert word in ended.status_reason, ended.status_reason
    assert ended.status_reason in str(failed.value)
    assert registry.password not in ended.status_reason
    manager_id = mgr.store.manager_id
    await mgr.close()
    assert leftovers(agents, manager_id) == {}
    assert agents["agent3"].docker("image", "inspect", image).returncode != 0


def test_image_pull_on_one_agent_from_the_command_line(
    tmp_path: Path, agents: AgentCluster, registry: PrivateRegistry
) -> None:
    settings = {
        "agents": agents.configs(),
        "db_path": str(tmp_path / "cli.db"),
        "registry_credentials": credentials(registry),
    }
    (tmp_path / "jupyter_cluster_config.json").write_text(json.dumps({"ClusterManager": settings}))
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(tmp_path), "JUPYTER_CONFIG_PATH": ""}
    jupyter = str(Path(sys.executable).with_name("jupyter"))

    def pull() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [jupyter, "cluster", "image", "pull", registry.image, "--agent", "agent3"],
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )

    first = pull()
    assert first.returncode == 0, first.stderr
    assert first.stdout.startswith("agent3: pulled in ")
    assert "agent3: pulling" in first.stderr  # progress while it runs
    assert agents["agent3"].docker("image", "inspect", registry.image).returncode == 0
    again = pull()
    assert (again.returncode, again.stdout) == (0, "agent3: has it already\n")
    assert registry.password not in first.stdout + first.stderr
