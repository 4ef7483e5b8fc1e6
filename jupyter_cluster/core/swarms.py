"""Which agents form one Docker Swarm, from what each agent's engine says of itself.

Pure: :class:`~jupyter_cluster.engine.agents.pool.AgentPool` calls :func:`join_swarms`
with every agent's :class:`SwarmNode` (from ``docker info``) and gives the scheduler
and ``jupyter cluster agents`` the result. Only a Swarm manager knows its cluster's
id; a worker knows its own node id and its managers' node ids. So agents are one
Swarm when they are linked through those manager node ids, and such a Swarm can
carry multi-node sessions only while one of its managers is a reachable agent here
(overlay networks are made through a manager). Agents that do not answer report
nothing of their Swarm: the note of workers left without a manager names them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class SwarmNode:
    """An agent's place in a Swarm, as its engine reports it ("" / () when none)."""

    agent: str
    reachable: bool
    node: str = ""  # this engine's Swarm node id
    manager: bool = False  # whether it is a manager (it can make overlay networks)
    managers: tuple[str, ...] = ()  # the node ids of the Swarm's managers it knows
    cluster: str = ""  # the Swarm's cluster id (only managers report it)


@dataclass(frozen=True)
class Membership:
    """An agent's Swarm as the scheduler uses it: ``swarm`` is the key shared by the
    agents a multi-node session may span ("" when it may span none), ``note`` why an
    agent that is a Swarm node still can't be spanned."""

    swarm: str = ""
    note: str = ""


def join_swarms(nodes: Sequence[SwarmNode]) -> dict[str, Membership]:
    """Each agent's :class:`Membership` (by agent id)."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    def union(a: str, b: str) -> None:
        parent[find(a)] = find(b)

    members = [n for n in nodes if n.reachable and n.node]
    for n in members:
        for manager in n.managers:
            union("node:" + n.node, "node:" + manager)
    groups: dict[str, list[SwarmNode]] = {}
    for n in members:
        groups.setdefault(find("node:" + n.node), []).append(n)
    result = {n.agent: Membership() for n in nodes}
    # A down agent reports no Swarm: it may be the manager the workers wait for.
    down = sorted(n.agent for n in nodes if not n.reachable)
    silent = f" (agents not answering now: {', '.join(down)})" if down else ""
    for group in groups.values():
        managers = sorted((n for n in group if n.manager), key=lambda n: n.agent)
        if managers:
            key = managers[0].cluster or "nodes:" + managers[0].node
            for n in group:
                result[n.agent] = Membership(swarm=key)
            continue
        known = sorted({m for n in group for m in n.managers})
        note = (
            "a Docker Swarm worker whose managers (nodes "
            f"{', '.join(m[:12] for m in known) or 'unknown'}) are not reachable agents here"
            f"{silent}: multi-node sessions can't span it until one is (an overlay network is "
            "made through a manager; add one as an agent, or check that it answers)"
        )
        for n in group:
            result[n.agent] = Membership(note=note)
    return result
