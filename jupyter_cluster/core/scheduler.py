"""Placement of a session's containers on agents, for both cluster modes.

Pure: the store calls :func:`place` inside its write transaction with the agents'
capacities and what active sessions already hold, so two processes can never
double-book an agent. Returns where each container goes, or why the session must
wait (PENDING), or raises when it could never fit.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from ..errors import InvalidRequest
from .agent_slot import AgentSlot as AgentSlot
from .agent_slot import fits_in as fits_in
from .models import ClusterMode, LaunchSpec
from .resources import Resources
from .units import format_size
from .waiting_reasons import Pending, multi_node_pending, single_node_pending, swarm_pending
from .warm import spec_place_key
from .warm_spread import warm_layout


@dataclass(frozen=True)
class Placement:
    """Where each container goes (``agents[i]`` for the i-th host) and its GPU ids."""

    agents: tuple[str, ...]
    gpu_ids: tuple[tuple[str, ...], ...]

    @property
    def agent_count(self) -> int:
        return len(set(self.agents))


def rank_key(slot: AgentSlot, per: Resources) -> tuple[int, float, str]:
    """The order agents are tried in: most room for ``per`` first, then most free CPU,
    then by id (deterministic)."""
    return (-slot.fits(per), -slot.free().cpu, slot.id)


def _spread(ranked: Sequence[AgentSlot], spec: LaunchSpec) -> list[tuple[AgentSlot, int]] | None:
    """Containers per agent filling the roomiest first, or None when they don't fit."""
    plan: list[tuple[AgentSlot, int]] = []
    remaining = spec.size
    for slot in ranked:
        take = min(slot.fits(spec.resources), remaining)
        if take > 0:
            plan.append((slot, take))
            remaining -= take
        if remaining == 0:
            return plan
    return None


def _swarms(ranked: Sequence[AgentSlot]) -> list[list[AgentSlot]]:
    """The agents that can share an overlay network: one list per Docker Swarm."""
    by_swarm: dict[str, list[AgentSlot]] = {}
    for slot in ranked:
        if slot.swarm:
            by_swarm.setdefault(slot.swarm, []).append(slot)
    return list(by_swarm.values())


def place(spec: LaunchSpec, agents: Sequence[AgentSlot]) -> Placement | Pending:
    """Decide where the ``spec.size`` containers of a session go (see :func:`place_on`),
    on agents that have the image when they can hold it, else also on agents that
    would pull it first."""
    if any(a.has_image and not a.image_local for a in agents):
        local = [replace(a, has_image=a.image_local) for a in agents]
        try:
            found = place_on(spec, local)
        except InvalidRequest:
            found = None
        if isinstance(found, Placement):
            return found
    return place_on(spec, agents)


def place_on(spec: LaunchSpec, agents: Sequence[AgentSlot]) -> Placement | Pending:
    """Decide where the ``spec.size`` containers of a session go on ``agents``.

    single-node: all on one agent, the one with the most room, or Pending.
    multi-node: all on one agent when one has room (least latency); otherwise
    spread, filling the agents with the most room first so the session spans as
    few agents as possible; all or nothing.
    Raises :class:`InvalidRequest` when the session could not fit even on empty
    agents, so nobody waits forever.
    """
    group = [a for a in agents if a.resource_group == spec.resource_group]
    if not group:
        known = sorted({a.resource_group for a in agents})
        raise InvalidRequest(
            f"resource_group: no agent is in resource group {spec.resource_group!r}; "
            f"known groups: {', '.join(known) or 'none'}",
            "resource_group",
        )
    with_image = [a for a in group if a.has_image]
    if not with_image:
        raise InvalidRequest(
            f"image: no agent of resource group {spec.resource_group!r} has the image "
            f"{spec.image!r}; build it (jupyter cluster image build, or docker build) first",
            "image",
        )
    per, n = spec.resources, spec.size
    eligible = [a for a in with_image if a.schedulable]
    if not eligible:
        # Down agents may report no capacity, so don't judge the size on them yet.
        return Pending(
            f"waiting for an agent of group {spec.resource_group!r} to take sessions again: "
            f"{', '.join(a.id for a in with_image)} cannot take sessions now"
        )
    # Judged over unschedulable agents too: one that is down now may come back.
    _check_ever_fits(spec, with_image)

    # Most free room first; ties by id so placement is deterministic.
    keyed = sorted(((rank_key(a, per), a) for a in eligible), key=lambda pair: pair[0])
    ranked = [a for _, a in keyed]
    if any(a.warm for a in ranked):  # an agent with a ready set of its shape first
        key = spec_place_key(spec)
        warm = [a for a in ranked if key in a.warm and a.fits(per) >= n]
        if warm:
            return _assign(spec, [(warm[0], n)])
    if -keyed[0][0][0] >= n:  # the roomiest agent holds the whole session
        return _assign(spec, [(ranked[0], n)])
    down = [a.id for a in with_image if not a.schedulable]
    if spec.mode is ClusterMode.SINGLE_NODE:
        return single_node_pending(spec, ranked, len(ranked), down)
    if any(a.warm_layouts for a in ranked):  # placed as a ready spread set lies
        runs = warm_layout(spec, ranked)
        if runs:
            return _assign(spec, runs)
    if any(a.one_container for a in ranked):  # on the agents' own networks: no Swarm
        plan = _spread(ranked, spec)
        if plan is not None:
            return _assign(spec, plan)
        return multi_node_pending(spec, ranked, len(ranked), down)
    # Containers on several agents share an overlay network: one Swarm only.
    for swarm in sorted(_swarms(ranked), key=lambda s: -sum(a.fits(per) for a in s)):
        plan = _spread(swarm, spec)
        if plan is not None:
            return _assign(spec, plan)
    if _spread(ranked, spec) is not None:
        return swarm_pending(spec, ranked)
    return multi_node_pending(spec, ranked, len(ranked), down)


def empty_fits(slot: AgentSlot, per: Resources) -> int:
    """How many containers of ``per`` the agent could hold if it were empty."""
    count = fits_in(per, slot.capacity.cpu, slot.capacity.mem, len(slot.gpu_ids))
    return min(count, 1) if slot.one_container else count


def _check_ever_fits(spec: LaunchSpec, eligible: Sequence[AgentSlot]) -> None:
    empties = [empty_fits(a, spec.resources) for a in eligible]
    check_ever_fits(spec, eligible, max(empties), sum(empties))


def check_ever_fits(spec: LaunchSpec, eligible: Sequence[AgentSlot], most: int, total: int) -> None:
    """Raise InvalidRequest when the session could not fit even on empty agents:
    ``most``/``total`` are the most one agent / all of them could ever hold."""
    per, n = spec.resources, spec.size
    if spec.mode is ClusterMode.SINGLE_NODE:
        if most >= n:
            return
        if most == 1 and any(a.one_container for a in eligible):
            raise InvalidRequest(
                f"size: resource group {spec.resource_group!r} runs its containers on the "
                f"agents' own networks, one per agent; a single-node session there has one "
                f"container. Use multi-node mode for {n} containers",
                "size",
            )
        biggest = max(eligible, key=lambda a: (a.capacity.cpu, a.capacity.mem))
        raise InvalidRequest(
            f"size: no agent of group {spec.resource_group!r} can ever hold {n} x "
            f"({per.describe()}) in single-node mode; the largest, {biggest.id}, has "
            f"{biggest.capacity.cpu:g} CPU, {format_size(biggest.capacity.mem)} memory and "
            f"{len(biggest.gpu_ids)} GPU in all. Ask for less or use multi-node mode",
            "size",
        )
    if total < n and any(a.one_container for a in eligible):
        raise InvalidRequest(
            f"size: resource group {spec.resource_group!r} runs one container per agent "
            f"(host network) and has {len(eligible)} agent(s); ask for at most {total}",
            "size",
        )
    if total < n:
        raise InvalidRequest(
            f"size: the agents of group {spec.resource_group!r} together can never hold "
            f"{n} x ({per.describe()}); ask for fewer or smaller containers",
            "size",
        )


def _assign(spec: LaunchSpec, plan: list[tuple[AgentSlot, int]]) -> Placement:
    agents: list[str] = []
    gpus: list[tuple[str, ...]] = []
    for slot, count in plan:
        free_gpus = slot.free_gpu_ids()
        for i in range(count):
            agents.append(slot.id)
            k = spec.resources.gpu
            gpus.append(tuple(free_gpus[i * k : (i + 1) * k]))
    return Placement(agents=tuple(agents), gpu_ids=tuple(gpus))
