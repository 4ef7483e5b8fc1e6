"""Making one warm set: its network and its waiting containers, all or nothing.

Called by :meth:`.warm_pool.WarmPool.fill` for each set the pure core's plans name
(``refill_plan`` for sets on one agent, ``spread_plan`` for sets over several). A
set on one agent gets a bridge network there; a set spread over agents gets an
attachable overlay made through a Swarm manager, as a cold session's is
(:func:`~.launch.overlay.overlay_maker`). Containers are made as what they will be
(hostname, aliases, published ports, mounts and GPUs are fixed at creation) and
wait on :data:`~.warm_prestart.WAIT_SCRIPT`; main1 also prestarts the kernel's
interpreter. With ``guard_bridges`` a set's bridge is named for the agent hosts'
guard (:mod:`jupyter_cluster.core.host_guard`), which is put on its hosts meanwhile
and awaited before the set is recorded. On any failure what was made is removed
before the error propagates.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import Callable
from typing import Protocol

from ..asyncwait import through
from ..core import naming
from ..core.host_guard import warm_bridge
from ..core.warm import WarmShape
from ..errors import AgentError
from .agents.base import Agent, BindMount, ContainerSpec, FileEntry, Limits
from .agents.pool import AgentPool
from .launch.creating import create_container, made
from .launch.overlay import overlay_maker
from .launch.specs import published_ports_of
from .warm_fit import MountResolver, set_fit
from .warm_prestart import PRESTART, WAIT_SCRIPT, prestart_code, prestart_script, prestarted
from .warm_table import WarmTable


class WarmMaker(Protocol):
    """What making a set uses of :class:`~.warm_pool.WarmPool` (typed here, so the
    two modules do not import each other)."""

    agents: AgentPool
    table: WarmTable
    limits: Callable[[], Limits]
    resolve: MountResolver
    encrypted: Callable[[], bool]

    def labels(self, **extra: str) -> dict[str, str]: ...

    async def remove_parts(
        self, net_agent: str, network: str, containers: list[tuple[str, str]]
    ) -> None: ...


async def make_set(
    pool: WarmMaker,
    layout: tuple[str, ...],
    shape: WarmShape,
    gpu_ids: tuple[tuple[str, ...], ...],
) -> None:
    """Make one set of ``shape`` on the agents of ``layout`` (main1's first, one per
    host), its containers holding ``gpu_ids`` (per host), and record it as ready."""
    placed = [pool.agents.get(a) for a in dict.fromkeys(layout)]
    for agent in placed:
        if not await agent.has_image(shape.image):
            raise AgentError(f"agent {agent.id} has no image {shape.image}", agent.id)
    spread = len(placed) > 1
    net_agent = await overlay_maker(placed, pool.agents.agents) if spread else placed[0]
    mounts = {a.id: pool.resolve(shape, a.id) for a in placed}
    hosts = list(zip(shape.hosts, layout, gpu_ids or [()] * shape.size, strict=True))
    set_id = uuid.uuid4().hex
    network = f"jc-warm-{set_id[:12]}"
    limits = pool.limits()
    guarded = limits.guard_bridges
    # Cancelled meanwhile (the server stopping), wait for Docker and remove the
    # network: the drain's sweep may look before Docker has made it.
    await made(
        net_agent.create_network(
            network,
            pool.labels(**{naming.LABEL_WARM: "network"}),
            overlay=spread,
            encrypted=spread and pool.encrypted(),
            bridge_name=warm_bridge(set_id) if guarded and not spread else "",
        ),
        net_agent.remove_network,  # given the id Docker answers with
    )
    guarding = pool.agents.guards.start(placed, limits.egress_image if guarded else None)
    started: dict[str, str] = {}
    try:
        results = await asyncio.gather(
            *(
                make_container(pool, pool.agents.get(a), shape, set_id, network, h, mounts[a], g)
                for h, a, g in hosts
            ),
            return_exceptions=True,
        )
        started = {h: r for h, r in zip(shape.hosts, results, strict=True) if isinstance(r, str)}
        failed = [r for r in results if isinstance(r, BaseException)]
        if failed:
            raise failed[0]
        await guarding
        fit = set_fit(layout, mounts)
        pool.table.add_set(
            set_id, layout, shape.key, network, started, shape.total, fit, gpu_ids, net_agent.id
        )
    except BaseException:
        guarding.cancel()
        await asyncio.gather(guarding, return_exceptions=True)
        built = [(a, started[h]) for h, a, _ in hosts if h in started]
        await through(pool.remove_parts(net_agent.id, network, built))
        raise


async def make_container(
    pool: WarmMaker,
    agent: Agent,
    shape: WarmShape,
    set_id: str,
    network: str,
    host: str,
    mounts: tuple[BindMount, ...],
    gpu_ids: tuple[str, ...],
) -> str:
    """Create and start ``host`` of a set on ``agent``; its container id. main1 also
    gets the prestarted interpreter, ready before this returns."""
    role = "main" if host == shape.hosts[0] else "sub"
    limits = pool.limits()
    prestart = prestart_script(limits.work_uid) if role == "main" else ""
    spec = ContainerSpec(
        name=f"jc-{set_id[:12]}-{host}",
        image=shape.image,
        hostname=host,
        network=network,
        aliases=(host,),
        env={"HOME": naming.WORK_HOME},
        labels=pool.labels(
            **{naming.LABEL_WARM: shape.key, naming.LABEL_HOST: host, naming.LABEL_ROLE: role}
        ),
        resources=shape.resources,
        command=("/bin/sh", "-c", prestart + WAIT_SCRIPT),
        gpu_ids=gpu_ids,
        mounts=mounts,
        publish=published_ports_of(role, agent),
        limits=limits,
    )
    container_id = await create_container(agent, spec)
    try:
        if role == "main":
            await agent.put_files(container_id, [FileEntry(PRESTART, prestart_code(), 0o644)])
        await agent.start_container(container_id)
        if role == "main":
            await prestarted(agent, container_id)
    except BaseException:
        with contextlib.suppress(AgentError):
            await through(agent.remove_container(container_id))
        raise
    return container_id
