"""One Docker Swarm of the test agents, so attachable overlays span them.

Called by :meth:`tests.multihost.agents.AgentCluster.start` once the agents' engines
answer. As the README says: the first agent inits the Swarm, and the others run the
``docker swarm join`` command that ``swarm init`` prints, so they join as workers
(only agent1 is a manager, as at most sites: few managers, many workers).
:func:`promote` and :func:`demote` let a test make a manager-only Swarm for a while;
:func:`rejoin` brings back a worker that stays Down after its engine restarted.
Swarm commands go through ``docker exec`` to each agent's own socket.
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


def address_pool(overlay_pool: str) -> tuple[str, ...]:
    """``swarm init`` options keeping overlays in ``overlay_pool`` (this machine's
    network rules; a site may leave Docker's default)."""
    return ("--default-addr-pool", overlay_pool, "--default-addr-pool-mask-length", "24")


def printed_join(init_output: str) -> list[str]:
    """The ``docker swarm join --token … ADDR:2377`` command ``swarm init`` printed."""
    for line in init_output.splitlines():
        words = line.split()
        if words[:3] == ["docker", "swarm", "join"]:
            return words
    raise AgentStartError(f"docker swarm init printed no join command: {init_output!r}")


def manager_status(agent: AgentHost) -> dict[str, str]:
    """Host name -> manager status (``Leader``, ``Reachable``; "" for a worker)."""
    fmt = "{{.Hostname}} {{.ManagerStatus}}"
    out = agent.inside("docker", "node", "ls", "--format", fmt).stdout
    return {w[0]: " ".join(w[1:]) for w in (line.split() for line in out.splitlines()) if w}


def promote(manager: AgentHost, *agents: AgentHost, timeout: float = 60) -> None:
    """Make ``agents`` managers too (``docker node promote`` through ``manager``) and
    wait until each is a reachable member of the managers' quorum."""
    _node(manager, "promote", *agents)
    _until(manager, {a.id for a in agents}, ("Reachable", "Leader"), timeout)
    deadline = time.monotonic() + timeout
    while not all(_says_manager(a) for a in agents):  # each engine's own view lags
        if time.monotonic() > deadline:
            raise AgentStartError(f"promoted agents do not say they are managers: {agents}")
        time.sleep(0.5)


def demote(manager: AgentHost, *agents: AgentHost, timeout: float = 60) -> None:
    """Make ``agents`` workers again, one at a time (Swarm refuses a change that would
    cost the managers' quorum while another is under way); wait until they are."""
    for agent in agents:
        _node(manager, "demote", agent)
        _until(manager, {agent.id}, ("",), timeout)


def _says_manager(agent: AgentHost) -> bool:
    fmt = "{{.Swarm.ControlAvailable}}"
    return agent.inside("docker", "info", "--format", fmt).stdout.strip() == "true"


def _until(manager: AgentHost, names: set[str], states: tuple[str, ...], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while True:
        seen = manager_status(manager)
        if all(seen.get(n, "?") in states for n in names):
            return
        if time.monotonic() > deadline:
            raise AgentStartError(f"Swarm managers not as expected after {timeout:g} s: {seen}")
        time.sleep(0.5)


def _node(manager: AgentHost, verb: str, *agents: AgentHost) -> None:
    result = manager.inside("docker", "node", verb, *(a.id for a in agents), timeout=120)
    if result.returncode != 0:
        raise AgentStartError(f"docker node {verb} failed: {result.stderr}")


def all_ready(manager: AgentHost, timeout: float) -> bool:
    """Wait up to ``timeout`` s until every node ``manager`` lists is Ready; whether
    they all were."""
    deadline = time.monotonic() + timeout
    while set(swarm_nodes(manager).values()) != {"Ready"}:
        if time.monotonic() > deadline:
            return False
        time.sleep(0.5)
    return True


def rejoin(manager: AgentHost, worker: AgentHost) -> None:
    """Make ``worker`` a new worker of ``manager``'s Swarm: it leaves (``--force``), its
    old node is removed, and it joins with a fresh worker token, as an admin does with a
    worker that stays Down. Raises :class:`AgentStartError` if a step fails."""
    worker.inside("docker", "swarm", "leave", "--force", timeout=120)  # fails if not in one
    old = manager.inside("docker", "node", "ls", "-q", "--filter", f"name={worker.id}")
    for node in old.stdout.split():
        manager.inside("docker", "node", "rm", "--force", node, timeout=120)
    token = _swarm(manager, "join-token", "-q", "worker").stdout.strip()
    _swarm(worker, "join", "--token", token, f"{manager.ip}:2377")


def form_swarm(agents: Sequence[AgentHost], overlay_pool: str, timeout: float = 60) -> None:
    """Make ``agents`` one Swarm (overlays from ``overlay_pool``); wait until all are Ready."""
    first, others = agents[0], agents[1:]
    pool = address_pool(overlay_pool)
    printed = _swarm(first, "init", "--advertise-addr", first.ip, *pool).stdout
    join = printed_join(printed)
    for agent in others:
        result = agent.inside(*join, timeout=120)
        if result.returncode != 0:
            raise AgentStartError(f"{agent.id}: {' '.join(join[:3])} failed: {result.stderr}")
    deadline = time.monotonic() + timeout
    while True:
        nodes = swarm_nodes(first)
        if len(nodes) == len(agents) and all(s == "Ready" for s in nodes.values()):
            return
        if time.monotonic() > deadline:
            raise AgentStartError(f"Swarm nodes not all Ready after {timeout:g} s: {nodes}")
        time.sleep(0.5)
