"""Removing a session's containers and network from every agent involved.

Called by :class:`~.manager.ClusterManager` (terminate, cancelled launches), by
:class:`~.reconcile.Reconciler` (sessions left behind) and by :mod:`.bring_up`
when a launch fails. Finds containers by label as well as by recorded id, and
retries removing a Swarm overlay that agents still list.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Mapping

from ...core import naming
from ...core.models import Session
from ...core.state import ContainerStatus
from ...errors import AgentError, ClusterError
from ..agents.base import Agent
from .overlay import network_maker, placed_agents

log = logging.getLogger(__name__)
#: Attempts (0.05 s apart: a Swarm node stops listing a removed overlay within a
#: moment, and a coarse wait was most of a multi-agent terminate) to remove a session
#: network that agents still list.
NETWORK_RETRIES = 60


async def tear_down(
    session: Session,
    agents: Mapping[str, Agent],
    manager_id: str,
    *,
    lost: set[str] | None = None,
    skip: frozenset[str] = frozenset(),
    before_network: Callable[[], Awaitable[frozenset[str]]] | None = None,
) -> list[str]:
    """Remove every container and the network of ``session`` on every agent.

    Finds containers by label as well as by recorded id, so containers whose
    creation was interrupted are removed too. Returns problems it could not fix
    (empty when everything is gone). An involved agent that does not answer is
    asked nothing more (each call would wait for its timeout): with ``lost`` given,
    its id is added there and what it holds is left for later, not a problem;
    without, that is a problem. The containers of hosts in ``skip`` are being
    removed by someone else (see :mod:`..early_removal`): ``before_network`` waits
    for that and answers the hosts it could not remove, which are then swept here.
    """
    problems: list[str] = []
    involved = {c.agent for c in session.containers if c.agent} or set(agents)
    labels = {naming.LABEL_SESSION: session.id, naming.LABEL_MANAGER: manager_id}
    unreachable: set[str] = set()

    async def clean(agent: Agent, skip: frozenset[str]) -> None:
        ids = {
            c.container_id
            for c in session.containers
            if c.agent == agent.id
            and c.container_id
            and c.status is not ContainerStatus.TERMINATED
            and c.host not in skip
        }  # removed ones are not asked again (the label sweep below finds any left)
        try:
            listed = await agent.list_containers(labels, detail=False)
            ids |= {s.id for s in listed if s.labels.get(naming.LABEL_HOST) not in skip}
        except AgentError as exc:
            if not (await agent.info()).reachable:
                unreachable.add(agent.id)
                if lost is None:
                    problems.append(f"{exc}; its containers were not removed")
                return
        results = await asyncio.gather(
            *(agent.remove_container(cid) for cid in ids), return_exceptions=True
        )
        problems.extend(str(r) for r in results if isinstance(r, BaseException))

    await asyncio.gather(*(clean(agents[a], skip) for a in involved if a in agents))
    if before_network is not None and (missed := await before_network()):
        log.info("session %s: sweeping %s again", session.id, ", ".join(sorted(missed)))
        await asyncio.gather(*(clean(agents[a], frozenset()) for a in involved if a in agents))
    problems.extend(
        f"agent {a!r} is not in this manager's configuration; its containers were not removed"
        for a in sorted(involved - set(agents))
    )
    answering = {i: a for i, a in agents.items() if i not in unreachable}
    placed = placed_agents(session, answering)
    reached = placed or [answering[a] for a in sorted(involved) if a in answering]
    if len(placed) > 1:  # an overlay: removed through a Swarm manager
        with contextlib.suppress(ClusterError):
            maker = await network_maker(session, answering)
            reached = [maker, *(a for a in reached if a is not maker)]
    # A lost agent's containers keep an overlay in use: one try, not a wait.
    network_problems = await _remove_network(session, reached, 1 if unreachable else None)
    if lost is None or not unreachable:
        problems.extend(network_problems)
    if lost is not None:
        lost |= unreachable
    for problem in problems:
        log.warning("clean-up of session %s: %s", session.id, problem)
    return problems


async def _remove_network(
    session: Session, ordered: list[Agent], attempts: int | None = None
) -> list[str]:
    """Remove the session's network from every involved agent; problems left.

    ``ordered``: the involved agents in the order to try: the agent that made it first (main1's,
    or for an overlay a Swarm manager, see :mod:`.overlay`). A Swarm overlay is one
    network seen from every node, and a node may still list it for a moment after
    another removed it (or refuse while containers detach): retry until no involved
    agent lists it any more (``attempts`` times at most, default :data:`NETWORK_RETRIES`).
    """
    name = naming.network_name(session)
    # A warm set's network has no session label: look for it among the pool's.
    labels = (
        {naming.LABEL_WARM: "network"} if session.network else {naming.LABEL_SESSION: session.id}
    )
    problems: list[str] = []
    listed: list[str] = []
    attempts = attempts or NETWORK_RETRIES
    for attempt in range(attempts):
        problems = []
        for agent in ordered:
            try:
                await agent.remove_network(name)
            except AgentError as exc:
                problems.append(str(exc))
        listed = []
        for agent in ordered:
            with contextlib.suppress(AgentError):
                if any(n.name == name for n in await agent.list_networks(labels)):
                    listed.append(agent.id)
        if not listed:
            return []
        if attempt + 1 < attempts:
            await asyncio.sleep(0.05)
    return problems or [f"the network {name} is still listed on {', '.join(listed)}"]
