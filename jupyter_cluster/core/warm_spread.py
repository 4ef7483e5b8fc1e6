"""Warm sets that span agents: where to make them, and a launch placed onto one.

A shape no agent of a resource group could ever hold alone is launched spread over
several agents of one Docker Swarm, on an overlay network. The pool makes its sets
the same way (:func:`spread_plan`: the scheduler's order, filling the roomiest agents
first), and the scheduler places a multi-node session that no single agent can take
now exactly as a ready set lies, when every agent of it has room (:func:`warm_layout`),
so the launch can take that set. Pure; used by :mod:`.scheduler` and the engine's
:mod:`~jupyter_cluster.engine.warm_pool`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from .agent_slot import AgentSlot, fits_in
from .launch_spec import LaunchSpec
from .resources import Resources
from .warm import WarmSet, WarmShape, WarmTarget, spec_place_key
from .warm_room import free_for_warm


def spread_plan(
    targets: Sequence[WarmTarget],
    agents: Mapping[str, tuple[str, Resources]],
    swarms: Mapping[str, str],
    used: Mapping[str, Resources],
    warm: Sequence[WarmSet],
    waiting_groups: frozenset[str],
) -> list[tuple[tuple[str, ...], WarmShape]]:
    """The spread warm sets to make now, as (the agent of each host, shape).

    Only for targets that no agent of a group could hold even when empty (the others
    are :func:`~.warm.refill_plan`'s, one agent each); ``count`` is then the number of
    sets per group. ``agents``, ``used``, ``warm`` and ``waiting_groups`` are as for
    ``refill_plan``; ``swarms`` maps each agent to the Swarm it can span ("" none).
    Nothing is made beyond free capacity, nor in a group where a session waits.
    """
    free = {a: free_for_warm(a, cap, used, warm) for a, (_, cap) in agents.items()}
    groups = sorted({g for g, _ in agents.values()} - waiting_groups)
    plan: list[tuple[tuple[str, ...], WarmShape]] = []
    for target in targets:
        per, size = target.shape.resources, target.shape.size
        for group in groups:
            if target.resource_group and target.resource_group != group:
                continue
            members = sorted(a for a, (g, _) in agents.items() if g == group)
            if any(fits_in(per, *_room_of(agents[a][1])) >= size for a in members):
                continue  # one agent can hold it: refill_plan's
            have = sum(
                1
                for w in warm
                if w.spread and w.shape_key == target.shape.key and w.agent in members
            )
            for _ in range(target.count - have):
                layout = _spread_over(members, swarms, free, per, size)
                if layout is None:
                    break
                for agent_id in layout:
                    f = free[agent_id]
                    free[agent_id] = Resources(f.cpu - per.cpu, f.mem - per.mem, 0, f.gpu - per.gpu)
                plan.append((layout, target.shape))
    return plan


def _room_of(r: Resources) -> tuple[float, int, int]:
    return r.cpu, r.mem, r.gpu


def _spread_over(
    members: Sequence[str],
    swarms: Mapping[str, str],
    free: Mapping[str, Resources],
    per: Resources,
    size: int,
) -> tuple[str, ...] | None:
    """``size`` containers of ``per`` over the agents of one Swarm, the roomiest
    first (the scheduler's order), the Swarm with most room first; None if none fits."""

    def room(a: str) -> int:
        return fits_in(per, *_room_of(free[a]))

    by_swarm: dict[str, list[str]] = {}
    for a in members:
        if swarms.get(a):
            by_swarm.setdefault(swarms[a], []).append(a)
    for swarm in sorted(by_swarm.values(), key=lambda s: -sum(room(a) for a in s)):
        layout: list[str] = []
        for a in sorted(swarm, key=lambda a: (-room(a), -free[a].cpu, a)):
            layout += [a] * min(room(a), size - len(layout))
            if len(layout) == size:
                return tuple(layout)
    return None


def warm_layout(spec: LaunchSpec, ranked: Sequence[AgentSlot]) -> list[tuple[AgentSlot, int]]:
    """Where a session of ``spec`` goes to take a ready spread set of its shape: the
    set's agents and how many containers on each, in host order, when every one of
    them (among ``ranked``, the schedulable agents of its group) has room now; []
    when no set fits."""
    key = spec_place_key(spec)
    slots = {s.id: s for s in ranked}
    for slot in ranked:
        for shape_key, layout in sorted(slot.warm_layouts):
            if shape_key != key:
                continue
            runs: list[tuple[AgentSlot, int]] = []
            for agent_id in layout:
                if runs and runs[-1][0].id == agent_id:
                    runs[-1] = (runs[-1][0], runs[-1][1] + 1)
                elif agent_id in slots:
                    runs.append((slots[agent_id], 1))
                else:
                    break
            else:
                if all(s.fits(spec.resources) >= n for s, n in runs):
                    return runs
    return []
