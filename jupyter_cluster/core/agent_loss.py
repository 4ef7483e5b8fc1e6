"""What a session says about its containers on agents that stopped answering.

Pure: the reconciler (:mod:`jupyter_cluster.engine.reconcile`) names a running
session's lost containers in its RUNNING_DEGRADED reason, and the terminator
(:mod:`jupyter_cluster.engine.ending`) says which containers a termination still
has to remove once their agents answer again.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

from .models import Session


def hosts_on(session: Session, agents: Collection[str]) -> dict[str, list[str]]:
    """The host names of ``session``'s containers on each of ``agents`` that holds
    any (agents sorted, hosts in session order)."""
    found: dict[str, list[str]] = {}
    for container in session.containers:
        if container.agent is not None and container.agent in agents:
            found.setdefault(container.agent, []).append(container.host)
    return {agent: found[agent] for agent in sorted(found)}


def lost_reason(session: Session, down: Mapping[str, str]) -> str:
    """The RUNNING_DEGRADED reason of ``session`` while agents are down (``down``:
    agent id -> why): each lost container by name, with why its agent is lost."""
    return "; ".join(
        f"{', '.join(hosts)} lost: {down[agent]}"
        for agent, hosts in hosts_on(session, down).items()
    )


def removal_waits_reason(session: Session, lost: Collection[str]) -> str:
    """Why a termination is not finished: the containers on the unreachable agents
    ``lost`` (and the session's network, which they hold) are removed once they answer."""
    parts = [f"{', '.join(hosts)} on {agent}" for agent, hosts in hosts_on(session, lost).items()]
    return (
        f"waiting for {', '.join(sorted(lost))} to answer again to remove "
        f"{'; '.join(parts) or 'its containers'} and the session's network; everything "
        "else is removed"
    )
