"""Which agent makes (and removes) a session's network.

Called by :func:`~.bring_up.bring_up` and :func:`~.teardown.tear_down` (and by the
warm pool for its sets spread over agents). A session on
one agent gets a bridge network there. A session spread over several agents gets
an attachable Swarm overlay, which only a Swarm manager can make or remove: main1's
agent if it is a manager, else another manager among the session's agents, else a
manager of the same Swarm that holds none of its containers. Workers then attach
their containers to the overlay by name.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping

from ...core.models import Session
from ...errors import LaunchFailed
from ..agents.base import Agent, AgentInfo


def placed_agents(session: Session, agents: Mapping[str, Agent]) -> list[Agent]:
    """The agents of ``session``'s containers, main1's first, each once."""
    ids = list(dict.fromkeys(c.agent for c in session.containers if c.agent))
    return [agents[i] for i in ids if i in agents]


async def network_maker(session: Session, agents: Mapping[str, Agent]) -> Agent:
    """The agent through which ``session``'s network is made and removed.

    Raises LaunchFailed when the session spans agents and no manager of their
    Swarm is a reachable agent.
    """
    placed = placed_agents(session, agents)
    if len(placed) <= 1:
        return placed[0] if placed else agents[session.containers[0].agent or ""]
    return await overlay_maker(placed, agents)


async def overlay_maker(placed: list[Agent], agents: Mapping[str, Agent]) -> Agent:
    """The Swarm manager through which an overlay network spanning ``placed`` (more
    than one agent, main1's first) is made: see :func:`network_maker`, whose rules
    the warm pool's spread sets follow too. Raises LaunchFailed when there is none."""
    infos = await asyncio.gather(*(a.info() for a in placed))
    for agent, info in zip(placed, infos, strict=True):
        if info.swarm_manager:
            return agent
    known = {m for info in infos for m in info.swarm_managers}
    others = [a for a in agents.values() if a not in placed]
    for agent, info in zip(others, await asyncio.gather(*(a.info() for a in others)), strict=True):
        if _manages(info, known):
            return agent
    raise LaunchFailed(
        f"the agents {', '.join(a.id for a in placed)} are Docker Swarm "
        "workers and no manager of their Swarm is a reachable agent: its overlay network "
        "cannot be made; add a manager of that Swarm as an agent (see `jupyter cluster agents`)"
    )


def _manages(info: AgentInfo, managers: set[str]) -> bool:
    """Whether ``info``'s engine is one of the Swarm managers ``managers``."""
    return info.reachable and info.swarm_manager and info.swarm_node in managers
