"""Removing a session's containers, network and files volume from every agent involved.

Called by :class:`~.manager.ClusterManager` (terminate, cancelled launches), by
:class:`~.reconcile.Reconciler` (sessions left behind) and by :mod:`.bring_up`
when a launch fails. Finds containers by label as well as by recorded id, and
retries removing a Swarm overlay that agents still list.

A Swarm overlay is removed once the Swarm manager it is removed through accepted
the removal (with every container gone). With ``views`` given (the engine's
termination), the nodes' views that still list it are left to that
:class:`~.overlay_views.OverlayViews` to watch; without, they are waited for here.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from ...core import naming
from ...core.models import Session
from ...core.state import ContainerStatus
from ...errors import AgentError, ClusterError
from ..agents.base import Agent
from .overlay import network_maker, placed_agents
from .overlay_views import OverlayViews

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
    finding: asyncio.Future[Agent] | None = None,
    views: OverlayViews | None = None,
    report: bool = True,
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
    ``finding``: the lookup of an overlay's Swarm manager, if the caller started it
    (:func:`overlay_lookup`); otherwise it is started here. ``views``: who watches
    the nodes' views of a removed overlay (see the module's doc). ``report``: log
    each problem as a warning, for callers that go on without them; one that raises
    them passes False, so its user is not told twice.
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

    # Which Swarm manager removes an overlay is asked while the containers go.
    if finding is None and len(placed_agents(session, agents)) > 1:
        finding = overlay_lookup(session, agents)
    try:
        await asyncio.gather(*(clean(agents[a], skip) for a in involved if a in agents))
    except BaseException:
        if finding is not None:
            finding.cancel()
        raise
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
    maker = None
    if len(placed) > 1:
        maker = await _maker(session, answering, finding)
    elif finding is not None:  # an agent of the session no longer answers: not needed
        finding.cancel()
        await asyncio.gather(finding, return_exceptions=True)
    if maker is not None:  # an overlay: removed through a Swarm manager
        reached = [maker, *(a for a in reached if a is not maker)]
    # A session on one agent may have had a volume for its start-up files.
    volume = asyncio.ensure_future(_remove_volume(session, reached[:1] if maker is None else []))
    # A lost agent's containers keep an overlay in use: one try, not a wait.
    network_problems = await _remove_network(
        session, reached, 1 if unreachable else None, swarm_manager=maker, views=views
    )
    problems.extend(await volume)
    if lost is None or not unreachable:
        problems.extend(network_problems)
    if lost is not None:
        lost |= unreachable
    for problem in problems if report else ():
        log.warning("clean-up of session %s: %s", session.id, problem)
    return problems


async def tear_down_again(
    session: Session,
    agents: Mapping[str, Agent],
    manager_id: str,
    problems: list[str],
    tries: int,
    **how: Any,
) -> list[str]:
    """While ``problems`` (a :func:`tear_down`'s) remain, :func:`tear_down` once more
    0.5 s later, at most ``tries`` times, unreported; the problems left. For a session
    whose launch (maybe in another process) may still be making something: called by
    the terminator after removing a session still PREPARING (and waiting for its
    launch to let go). ``how``: more of :func:`tear_down`'s options."""
    for _ in range(tries):
        if not problems:
            break
        await asyncio.sleep(0.5)
        problems = await tear_down(session, agents, manager_id, report=False, **how)
    return problems


async def _remove_volume(session: Session, agents: list[Agent]) -> list[str]:
    """Remove the volume of ``session``'s start-up files (see :mod:`.shared_files`)
    from ``agents`` (at most main1's); problems left. A session without one costs a
    request that Docker answers "no such volume"."""
    problems = []
    for agent in agents:
        try:
            await agent.remove_volume(naming.files_volume_name(session))
        except AgentError as exc:
            problems.append(str(exc))
    return problems


def overlay_lookup(session: Session, agents: Mapping[str, Agent]) -> asyncio.Future[Agent]:
    """Start finding the Swarm manager that removes ``session``'s overlay (for
    :func:`tear_down`'s ``finding``, so a caller can start it before other work)."""
    return asyncio.ensure_future(network_maker(session, agents))


async def _maker(
    session: Session, answering: Mapping[str, Agent], finding: asyncio.Future[Agent] | None
) -> Agent | None:
    """The Swarm manager that removes ``session``'s overlay: the one ``finding`` (asked
    of every agent while the containers went) found if it still answers, else one
    asked of the ``answering`` agents; None when there is none."""
    found: Agent | None = None
    if finding is not None:
        with contextlib.suppress(ClusterError):
            found = await finding
    if found is not None and found.id in answering:
        return found
    with contextlib.suppress(ClusterError):
        return await network_maker(session, answering)
    return None


async def _remove_network(
    session: Session,
    ordered: list[Agent],
    attempts: int | None = None,
    *,
    swarm_manager: Agent | None = None,
    views: OverlayViews | None = None,
) -> list[str]:
    """Remove the session's network from every involved agent; problems left.

    ``ordered``: the involved agents in the order to try: the agent that made it first (main1's,
    or for an overlay a Swarm manager, see :mod:`.overlay`). A Swarm overlay is one
    network seen from every node, and a node may still list it for a moment after
    another removed it (or refuse while containers detach): retry until no involved
    agent lists it any more (``attempts`` times at most, default :data:`NETWORK_RETRIES`).
    ``swarm_manager``: for an overlay, the manager it is removed through (first in
    ``ordered``); once that one removed it without error, the nodes that still list
    it (the manager's own node too, for a moment) are handed to ``views`` to watch,
    if given, and this returns.
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
        removed_by_manager = False
        for agent in ordered:
            try:
                await agent.remove_network(name)
                removed_by_manager = removed_by_manager or agent is swarm_manager
            except AgentError as exc:
                problems.append(str(exc))
        listed = []
        for agent in ordered:
            with contextlib.suppress(AgentError):
                if any(n.name == name for n in await agent.list_networks(labels)):
                    listed.append(agent.id)
        if not listed:
            return []
        if removed_by_manager and views is not None:  # views that go by themselves
            views.watch(name, labels, [a for a in ordered if a.id in listed], attempts - attempt)
            return []
        if attempt + 1 < attempts:
            await asyncio.sleep(0.05)
    return problems or [f"the network {name} is still listed on {', '.join(listed)}"]
