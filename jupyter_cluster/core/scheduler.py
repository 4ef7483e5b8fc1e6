"""Placement of a session's containers on agents, for both cluster modes.

Pure: the store calls :func:`place` inside its write transaction with the agents'
capacities and what active sessions already hold, so two processes can never
double-book an agent. Returns where each container goes, or why the session must
wait (PENDING), or raises when it could never fit.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ..errors import InvalidRequest
from .models import ClusterMode, LaunchSpec
from .resources import Resources
from .units import format_size


@dataclass(frozen=True)
class AgentSlot:
    """One agent as the scheduler sees it: total capacity and what is in use."""

    id: str
    resource_group: str
    capacity: Resources
    used: Resources = field(default_factory=lambda: Resources(0, 0, 0, 0))
    gpu_ids: tuple[str, ...] = ()
    used_gpu_ids: frozenset[str] = frozenset()
    has_image: bool = True
    schedulable: bool = True
    swarm: str = ""  # the Docker Swarm the agent is a node of ("" = none)

    def free(self) -> Resources:
        return Resources(
            cpu=round(self.capacity.cpu - self.used.cpu, 6),
            mem=self.capacity.mem - self.used.mem,
            shm=0,
            gpu=len(self.free_gpu_ids()),
        )

    def free_gpu_ids(self) -> list[str]:
        return [g for g in self.gpu_ids if g not in self.used_gpu_ids]

    def fits(self, per_container: Resources, free: Resources | None = None) -> int:
        """How many containers of ``per_container`` fit in ``free`` (default: now)."""
        free = free or self.free()
        counts = []
        if per_container.cpu > 0:
            counts.append(int((free.cpu + 1e-9) // per_container.cpu))
        if per_container.mem > 0:
            counts.append(free.mem // per_container.mem)
        if per_container.gpu > 0:
            counts.append(free.gpu // per_container.gpu)
        return max(0, min(counts)) if counts else 1 << 30


@dataclass(frozen=True)
class Placement:
    """Where each container goes (``agents[i]`` for the i-th host) and its GPU ids."""

    agents: tuple[str, ...]
    gpu_ids: tuple[tuple[str, ...], ...]

    @property
    def agent_count(self) -> int:
        return len(set(self.agents))


@dataclass(frozen=True)
class Pending:
    """The session cannot start now; ``reason`` says why, for the user."""

    reason: str


def _describe_free(slots: Sequence[AgentSlot], down: Sequence[AgentSlot] = ()) -> str:
    parts = []
    for s in slots:
        f = s.free()
        gpu = f", {f.gpu} GPU" if s.gpu_ids else ""
        parts.append(f"{s.id} has {f.cpu:g} CPU, {format_size(max(f.mem, 0))} memory{gpu} free")
    if down:
        parts.append(f"unavailable: {', '.join(s.id for s in down)}")
    return "; ".join(parts)


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
    """Decide where the ``spec.size`` containers of a session go.

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
    ranked = sorted(eligible, key=lambda a: (-a.fits(per), -a.free().cpu, a.id))
    single = next((a for a in ranked if a.fits(per) >= n), None)
    if single is not None:
        return _assign(spec, [(single, n)])
    down = [a for a in with_image if not a.schedulable]
    if spec.mode is ClusterMode.SINGLE_NODE:
        return Pending(
            f"waiting for one agent of group {spec.resource_group!r} with room for "
            f"{n} x ({per.describe()}): {_describe_free(eligible, down)}"
        )
    # Containers on several agents share an overlay network: one Swarm only.
    for swarm in sorted(_swarms(ranked), key=lambda s: -sum(a.fits(per) for a in s)):
        plan = _spread(swarm, spec)
        if plan is not None:
            return _assign(spec, plan)
    if _spread(ranked, spec) is not None:
        return Pending(
            f"waiting for room for {n} x ({per.describe()}) on agents of one Docker Swarm "
            f"in group {spec.resource_group!r}: the agents with room are not nodes of the same "
            "Swarm (docker swarm init / join them, see `jupyter cluster agents`)"
        )
    return Pending(
        f"waiting for room for {n} x ({per.describe()}) across group "
        f"{spec.resource_group!r}: {_describe_free(eligible, down)}"
    )


def _check_ever_fits(spec: LaunchSpec, eligible: Sequence[AgentSlot]) -> None:
    per, n = spec.resources, spec.size
    empties = [
        (a, a.fits(per, Resources(a.capacity.cpu, a.capacity.mem, 0, len(a.gpu_ids))))
        for a in eligible
    ]
    if spec.mode is ClusterMode.SINGLE_NODE:
        if max(k for _, k in empties) >= n:
            return
        biggest = max(eligible, key=lambda a: (a.capacity.cpu, a.capacity.mem))
        raise InvalidRequest(
            f"size: no agent of group {spec.resource_group!r} can ever hold {n} x "
            f"({per.describe()}) in single-node mode; the largest, {biggest.id}, has "
            f"{biggest.capacity.cpu:g} CPU, {format_size(biggest.capacity.mem)} memory and "
            f"{len(biggest.gpu_ids)} GPU in all. Ask for less or use multi-node mode",
            "size",
        )
    if sum(k for _, k in empties) < n:
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
