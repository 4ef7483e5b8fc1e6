"""One Docker Swarm of the test agents, so attachable overlays span them.

Called by :meth:`tests.multihost.agents.AgentCluster.start` once the agents' engines
answer: the first agent inits the Swarm, the others join it as managers (any agent
can then create the overlay network of a session; three managers survive the loss
of one). Swarm commands go through ``docker exec`` to each agent's own socket.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Sequence

from .host import AgentHost, AgentStartError


def _swarm(agent: AgentHost, *args: str) -> subprocess.CompletedProcess[str]:
    """``docker swarm ARGS`` inside ``agent``; raise if it fails."""
    result = agent.inside("docker", "swarm", *args, timeout=120)
    if result.returncode != 0:
        raise AgentStartError(f"{agent.id}: docker swarm {args[0]} failed: {result.stderr}")
    return result


def swarm_nodes(agent: AgentHost) -> dict[str, str]:
    """Host name -> status (``Ready``, ``Down``...) of the Swarm's nodes, seen by ``agent``."""
    fmt = "{{.Hostname}} {{.Status}}"
    out = agent.inside("docker", "node", "ls", "--format", fmt).stdout
    return dict(line.split(" ", 1) for line in out.splitlines() if " " in line)


def form_swarm(agents: Sequence[AgentHost], overlay_pool: str, timeout: float = 60) -> None:
    """Make ``agents`` one Swarm (overlays from ``overlay_pool``); wait until all are Ready."""
    first, others = agents[0], agents[1:]
    _swarm(
        first,
        "init",
        "--advertise-addr",
        first.ip,
        "--listen-addr",
        f"{first.ip}:2377",
        "--default-addr-pool",
        overlay_pool,
        "--default-addr-pool-mask-length",
        "24",
    )
    token = _swarm(first, "join-token", "-q", "manager").stdout.strip()
    for agent in others:
        _swarm(
            agent,
            "join",
            "--token",
            token,
            "--advertise-addr",
            agent.ip,
            "--listen-addr",
            f"{agent.ip}:2377",
            f"{first.ip}:2377",
        )
    deadline = time.monotonic() + timeout
    while True:
        nodes = swarm_nodes(first)
        if len(nodes) == len(agents) and all(s == "Ready" for s in nodes.values()):
            return
        if time.monotonic() > deadline:
            raise AgentStartError(f"Swarm nodes not all Ready after {timeout:g} s: {nodes}")
        time.sleep(0.5)
