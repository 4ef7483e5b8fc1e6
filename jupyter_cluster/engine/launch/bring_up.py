"""Bringing a placed session up on its agents: network, containers, readiness.

Called by :class:`~jupyter_cluster.engine.manager.ClusterManager` once the store has
placed a session (PREPARING): makes the private network while agents that lack the
image pull it (:mod:`.pulling`), creates every container concurrently, copies the
start-up files in, starts them and waits until each says it is ready. All or
nothing: on any failure everything made is removed and the caller marks the session
ERROR. The phases (network, pull, create, files, start,
ssh_ready, bootstrap) are timed with the context's :class:`LaunchClock`.

Its helpers: :mod:`.context` is what it is given, :mod:`.specs` what each container
is made as, :mod:`.shared_files` the volume that carries the subs' start-up files
in sub1's copy, :mod:`.session_network` makes the
network while the image is pulled, :mod:`.readiness` waits for each container's
start-up script (and, across agents, until main1 reaches the others),
:mod:`.warm_adoption` takes over a warm set's containers, and :mod:`.teardown`
removes what a failed launch made (as it does for the manager and the reconciler).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any

from ...asyncwait import through
from ...core import naming
from ...core.models import Container, Session
from ...core.state import ContainerStatus
from ...errors import AgentError, ClusterError, LaunchFailed
from . import egress
from .context import KeepLogs, LaunchContext
from .creating import create_container, created_early
from .overlay import placed_agents
from .rdma import rdma_devices_on
from .readiness import wait_reachable, wait_ready
from .session_network import network_and_image
from .shared_files import SharedFiles, carried, start_sharing
from .specs import spec_for, start_files
from .teardown import tear_down
from .warm_adoption import adopt_warm

log = logging.getLogger(__name__)

#: Called as containers progress: (host, status, container id or None).
ProgressCallback = Callable[[str, ContainerStatus, str | None], Awaitable[None]]
#: Most seconds main1 may wait to reach the containers on other agents.
REACH_TIMEOUT = 60.0


async def _bring_up(
    session: Session,
    container: Container,
    ctx: LaunchContext,
    progress: ProgressCallback,
    main_started: asyncio.Event,
    networking: asyncio.Future[None],
    shared: SharedFiles | None,
) -> str:
    assert container.agent is not None
    agent = ctx.agents[container.agent]
    host = container.host
    denied = ctx.limits.egress_deny
    warm_id = ctx.warm.get(host)
    if warm_id:
        await asyncio.shield(networking)
        container_id = warm_id
        files = start_files(session, container, ctx)
        await adopt_warm(session, container, agent, warm_id, files, progress, ctx.mark)
    else:
        container_id = await _create_and_start(
            session, container, ctx, progress, main_started, networking, shared
        )
    if denied:
        labels = naming.container_labels(session, container, ctx.manager_id)
        labels.pop(naming.LABEL_HOST)  # not one of the session's hosts
        await egress.apply_egress_rules(
            agent,
            container_id,
            container.host,
            denied,
            ctx.limits.egress_image,
            labels,
            [a.config.address for a in ctx.agents.values()],
        )
    ctx.mark(host, "start")
    await wait_ready(agent, container_id, host, ctx.timeout, lambda: ctx.mark(host, "ssh_ready"))
    ctx.mark(host, "ssh_ready")
    ctx.mark(host, "bootstrap")
    await progress(container.host, ContainerStatus.RUNNING, container_id)
    return container_id


async def _create_and_start(
    session: Session,
    container: Container,
    ctx: LaunchContext,
    progress: ProgressCallback,
    main_started: asyncio.Event,
    networking: asyncio.Future[None],
    shared: SharedFiles | None,
) -> str:
    """The cold path: create the container, copy its files in, start it. main1 of a
    session on one agent is created (and its files copied in) while the session's
    network is being made, then moved onto it before it starts (see
    :func:`.creating.created_early`); the others are created once the network exists.
    With ``shared``, the carrier's copy brings the other subs' files too, and they
    start once it is in (see :mod:`.shared_files`); the carrier is made ahead of the
    network as main1 is."""
    assert container.agent is not None
    agent = ctx.agents[container.agent]
    main = container.role == "main"
    container_id = await _create_with_files(session, container, ctx, progress, networking, shared)
    if main:
        try:
            await agent.start_container(container_id)
        finally:
            main_started.set()
    else:
        # main1 starts first: the kernel waits on it, while nobody waits on a sub
        # before the session is RUNNING; on a small host this wins ~0.1 s. A sub
        # that starts from the volume also waits until the carrier filled it.
        await main_started.wait()
        if shared is not None:
            await shared.filled.wait()
        await agent.start_container(container_id)
    return container_id


async def _create_with_files(
    session: Session,
    container: Container,
    ctx: LaunchContext,
    progress: ProgressCallback,
    networking: asyncio.Future[None],
    shared: SharedFiles | None,
) -> str:
    """Create one container of the cold path with its files in; its id."""
    assert container.agent is not None
    agent = ctx.agents[container.agent]
    host = container.host
    main = container.role == "main"
    await progress(host, ContainerStatus.CREATING, None)
    spec = spec_for(session, container, ctx)
    devices = await rdma_devices_on(agent, ctx.network, session, ctx.manager_id)
    spec = replace(spec, devices=devices, memlock=ctx.network.memlock)
    files = start_files(session, container, ctx)
    carrier = shared is not None and host == shared.carrier
    if shared is not None and not main:
        spec = replace(spec, mounts=(*spec.mounts, shared.mount(carrier=carrier)))
        if carrier:
            subs = {c.host: start_files(session, c, ctx) for c in shared.carried_hosts}
            files = [*files, *carried(subs)]
        else:
            spec = replace(spec, command=shared.command(host))
            files = []
        await asyncio.shield(shared.made)
    carrying = shared if carrier else None  # the carrier's SharedFiles
    container_id = None
    if (main or carrying is not None) and _joins_late(session, ctx):
        # The carrier's copy, on which every sub's start waits, is the largest of a
        # launch (0.25 s at size 16): made ahead too, it overlaps making the network.
        created = carrying.carrier_created.set if carrying is not None else None
        container_id = await created_early(agent, spec, files, networking, created)
    if container_id is None:
        await asyncio.shield(networking)
        if shared is not None and not main and not carrier:
            # Docker then takes the carrier's creation first, and its copy, on which
            # every sub's start waits, begins while the others are being created.
            await shared.carrier_created.wait()
        container_id = await create_container(agent, spec)
        if carrying is not None:
            carrying.carrier_created.set()
        ctx.mark(host, "create")
        await progress(host, ContainerStatus.STARTING, container_id)
        if files:
            await agent.put_files(container_id, files)
    else:
        ctx.mark(host, "create")  # created, files in, on its network
        await progress(host, ContainerStatus.STARTING, container_id)
    if carrying is not None:
        carrying.filled.set()
    ctx.mark(host, "files")
    return container_id


def _joins_late(session: Session, ctx: LaunchContext) -> bool:
    """Whether main1 may be created before its network exists: a cold session on
    one agent, on a bridge it gets (not the host's network, not a warm set's)."""
    one_agent = len(placed_agents(session, ctx.agents)) == 1  # else an overlay
    return not ctx.warm and not ctx.network.host_network and one_agent


async def bring_up(session: Session, ctx: LaunchContext, progress: ProgressCallback) -> None:
    """Create the network and every container of a placed session, concurrently.

    On failure removes everything this launch made, then raises
    :class:`LaunchFailed` naming the host that failed first.
    """
    placed = {c.agent for c in session.containers if c.agent}
    if ctx.warm:  # taken warm containers carry no session labels: clean-up needs their ids
        session = session.with_(
            containers=tuple(
                c.with_(container_id=ctx.warm[c.host]) if c.host in ctx.warm else c
                for c in session.containers
            )
        )
    # The network is made (and missing images pulled) while main1 is created; the
    # hosts' guard is put up meanwhile (once per process), awaited before RUNNING.
    networking = asyncio.ensure_future(
        network_and_image(session, ctx, sorted(a for a in placed if a))
    )
    guarding = ctx.start_guard(sorted(a for a in placed if a))
    shared = None
    if _joins_late(session, ctx) and len(session.containers) > 2:  # see .shared_files
        agent = ctx.agents[session.containers[0].agent or ""]
        shared = start_sharing(session, agent, ctx.manager_id)
    main_started = asyncio.Event()
    if session.containers[0].host in ctx.warm:  # main1 runs already
        main_started.set()
    tasks = [
        asyncio.ensure_future(
            _bring_up(session, c, ctx, progress, main_started, networking, shared)
        )
        for c in session.containers
    ]
    failure: BaseException | None = None
    try:
        for done in asyncio.as_completed(tasks):
            try:
                await done
            except (ClusterError, OSError) as exc:
                failure = exc
                break
        if failure is None and len(placed) > 1:
            try:
                await _across_agents(session, ctx, tasks[0].result())
            except (ClusterError, OSError) as exc:
                failure = exc
        if failure is None:
            try:
                await guarding
            except ClusterError as exc:
                failure = exc
    except BaseException as exc:  # cancelled from outside: still clean up
        failure = exc
    if failure is None:
        return
    # Cancelled again while it cleans up (the launch's stop, a second cancel), the
    # clean-up goes on: cut short, it would leave what Docker was still making.
    await through(_clean_up(session, ctx, [*tasks, networking, guarding], shared))
    if isinstance(failure, LaunchFailed):
        raise failure
    if isinstance(failure, ClusterError):
        raise LaunchFailed(str(failure)) from failure
    raise failure


async def _clean_up(
    session: Session,
    ctx: LaunchContext,
    pending: list[asyncio.Future[Any]],
    shared: SharedFiles | None,
) -> None:
    """After a failed or cancelled :func:`bring_up`: stop its ``pending`` work (each
    creation in flight waits for Docker's answer, see :mod:`.creating`), keep the
    containers' logs, and remove everything the launch made."""
    if shared is not None:
        pending.append(shared.made)
    for task in pending:
        task.cancel()
    await asyncio.gather(*pending, return_exceptions=True)
    elsewhere = ctx.ended_elsewhere()  # the process that ended it keeps logs, reports
    if ctx.keep_logs is not None and not elsewhere:  # a cancelled launch's too
        await _keep_logs(session, ctx, ctx.keep_logs)
    await tear_down(session, ctx.agents, ctx.manager_id, report=not elsewhere)


async def _across_agents(session: Session, ctx: LaunchContext, main_id: str) -> None:
    """A session on several agents is RUNNING only once main1 reaches the containers
    on the other agents (``ssh subN`` must work at once); counted in ``bootstrap``."""
    main = session.containers[0]
    away = [c.host for c in session.containers if c.agent != main.agent]
    agents = sorted({c.agent or "" for c in session.containers})
    timeout = min(ctx.timeout, REACH_TIMEOUT)
    await wait_reachable(ctx.agents[main.agent or ""], main_id, away, agents, timeout)
    if ctx.clock is not None:
        ctx.clock.extend("bootstrap")


async def _keep_logs(session: Session, ctx: LaunchContext, keep: KeepLogs) -> None:
    """Hand the containers this launch created (found by label, so those whose
    creation was interrupted count too) to ``keep``; never fails the clean-up."""
    labels = {naming.LABEL_SESSION: session.id, naming.LABEL_MANAGER: ctx.manager_id}
    ids: dict[str, str] = {}
    for agent_id in {c.agent for c in session.containers if c.agent in ctx.agents}:
        with contextlib.suppress(AgentError):
            for found in await ctx.agents[agent_id or ""].list_containers(labels, detail=False):
                ids[found.labels.get(naming.LABEL_HOST, "")] = found.id
    created = [c.with_(container_id=ids[c.host]) for c in session.containers if c.host in ids]
    try:
        await keep(session, created)
    except Exception as exc:  # the logs are a courtesy; the clean-up must happen
        log.warning("could not keep the logs of failed session %s: %s", session.id, exc)
