"""The room the warm pool takes and gives back: which sets of one agent to make now
(:func:`refill_plan`), what of an agent neither sessions nor sets hold
(:func:`free_for_warm`), and which sets give way to a placed session
(:func:`to_evict`). Pure; used by the engine's
:mod:`~jupyter_cluster.engine.warm_pool` and by :mod:`.warm_spread`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from .resources import Resources
from .warm import WarmSet, WarmShape, WarmTarget


def refill_plan(
    targets: Sequence[WarmTarget],
    agents: Mapping[str, tuple[str, Resources]],
    used: Mapping[str, Resources],
    warm: Sequence[WarmSet],
    waiting_groups: frozenset[str],
) -> list[tuple[str, WarmShape]]:
    """The warm sets to make now, as (agent, shape).

    ``agents`` maps each schedulable agent to (resource group, capacity); ``used`` is
    what sessions hold per agent; ``warm`` what the pool already has. Nothing is made
    on an agent whose group has a session waiting for room, nor beyond free capacity
    (capacity minus sessions minus warm sets, each counted at its limits).
    """
    plan: list[tuple[str, WarmShape]] = []
    for agent_id, (group, capacity) in sorted(agents.items()):
        if group in waiting_groups:
            continue
        free = free_for_warm(agent_id, capacity, used, warm)
        mine = [w for w in warm if w.agents == {agent_id}]
        for target in targets:
            if target.resource_group and target.resource_group != group:
                continue
            have = sum(1 for w in mine if w.shape_key == target.shape.key)
            for _ in range(target.count - have):
                need = target.shape.total
                if need.cpu > free.cpu + 1e-9 or need.mem > free.mem or need.gpu > free.gpu:
                    break
                free = _minus(free, need)
                plan.append((agent_id, target.shape))
    return plan


def free_for_warm(
    agent_id: str, capacity: Resources, used: Mapping[str, Resources], warm: Sequence[WarmSet]
) -> Resources:
    """What of ``agent_id``'s ``capacity`` neither sessions (``used``) nor the warm sets
    (their containers on it) hold."""
    free = _minus(capacity, used.get(agent_id, Resources(0, 0, 0, 0)))
    for held in warm:
        free = _minus(free, held.held_on(agent_id))
    return free


def to_evict(
    capacity: Resources,
    used: Resources,
    warm: Sequence[WarmSet],
    keep_key: str = "",
    used_gpus: frozenset[str] = frozenset(),
    agent_id: str = "",
) -> list[WarmSet]:
    """The warm sets on one agent (``agent_id``; "" counts each set whole) to remove so
    that sessions (``used``, holding the GPU ids ``used_gpus``) and the pool fit its
    ``capacity``: first every set holding a GPU a session was given, then sets of
    other shapes than ``keep_key``. A set spread over agents is removed whole."""

    def held(w: WarmSet) -> Resources:
        return w.held_on(agent_id) if agent_id else w.total

    evicted = [w for w in warm if (w.gpus_on(agent_id) if agent_id else w.gpus) & used_gpus]
    total = used
    for w in warm:
        if w not in evicted:
            h = held(w)
            total = Resources(total.cpu + h.cpu, total.mem + h.mem, 0, total.gpu + h.gpu)
    rest = [w for w in warm if w not in evicted]
    for w in sorted(rest, key=lambda w: w.shape_key == keep_key):  # other shapes first
        if (
            total.cpu <= capacity.cpu + 1e-9
            and total.mem <= capacity.mem
            and total.gpu <= capacity.gpu
        ):
            break
        evicted.append(w)
        total = _minus(total, held(w))
    return evicted


def _minus(a: Resources, b: Resources) -> Resources:
    return Resources(a.cpu - b.cpu, a.mem - b.mem, 0, a.gpu - b.gpu)
