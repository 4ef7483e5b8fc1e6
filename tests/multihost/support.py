"""Helpers of the multi-host tests: an engine on the test agents, and what it left there.

Each test runs an engine in this process (:func:`engine`) with a store of its own,
configured with the ``agents`` fixture's agents; :func:`leftovers` asks each agent's
engine (docker CLI) for what is still labelled with that engine's manager id.
"""

from __future__ import annotations

import time
import uuid
from pathlib import Path
from typing import Any

from jupyter_cluster.engine.manager import ClusterManager
from tests.support.constants import LABEL_MANAGER

from .agents import AgentCluster

#: Per-container resources: each agent (capacity 1 CPU) holds two.
SMALL = {"cpu": 0.5, "mem": "256m"}


def engine(tmp_path: Path, agents: AgentCluster, **traits: Any) -> ClusterManager:
    """An engine on the test agents, with a store of its own and short timeouts."""
    configs = traits.pop("agent_configs", None) or agents.configs(cpu=1, mem="4g")
    return ClusterManager(
        db_path=str(tmp_path / f"cluster-{uuid.uuid4().hex[:6]}.db"),
        data_root=agents.data_root,
        agents=configs,
        pending_poll_interval=0.2,
        docker_timeout=traits.pop("docker_timeout", 20.0),
        docker_connect_timeout=3.0,
        **traits,
    )


#: Seconds a Swarm worker may keep its view of an overlay removed through the manager.
VIEW_SECONDS = 5.0


def leftovers(agents: AgentCluster, manager_id: str) -> dict[str, list[str]]:
    """Containers and networks of ``manager_id`` still on each agent (docker CLI).
    Containers count at once; a network still listed is looked for again for up to
    :data:`VIEW_SECONDS`: a Swarm worker keeps its view of an overlay removed through
    the manager for a moment (the engine does not wait for it, see
    engine/launch/teardown.py), and the worker's view must then go by itself."""
    label = f"label={LABEL_MANAGER}={manager_id}"
    deadline = time.monotonic() + VIEW_SECONDS
    while True:
        found: dict[str, list[str]] = {}
        containers = False
        for agent in agents:
            ps = agent.docker("ps", "-aq", "--filter", label).stdout.split()
            nets = agent.docker("network", "ls", "-q", "--filter", label).stdout.split()
            containers = containers or bool(ps)
            if ps or nets:
                found[agent.id] = ps + nets
        if not found or containers or time.monotonic() > deadline:
            return found
        time.sleep(0.2)


async def exec_output(manager: ClusterManager, ref: str, host: str, *cmd: str) -> str:
    """``cmd``'s output in ``host`` of session ``ref``, stripped; it must exit 0."""
    chunks: list[bytes] = []
    code = await manager.exec(ref, host, list(cmd), on_output=lambda s, d: chunks.append(d))
    text = b"".join(chunks).decode()
    assert code == 0, f"{cmd} in {host} exited with {code}: {text}"
    return text.strip()


async def close_engine(manager: ClusterManager) -> str:
    """Terminate every session of ``manager`` and close it; its manager id, for
    :func:`leftovers` (a test's ``finally``)."""
    for found in await manager.list():
        await manager.terminate(found.id)
    manager_id = manager.store.manager_id
    await manager.close()
    return manager_id
