"""Placing a whole queue of sessions at once, as fast as the queue is long.

:func:`place_queue` makes exactly the decisions :func:`place_each` makes (calling
:func:`~.scheduler.place` for each session in turn, each placed session's
containers then counting as used), in the store's queue order: first in, first
out per resource group (a session waits behind an earlier one of its group that
waits), or, with ``backfill``, every session tried in turn.

:func:`place_each` looks at every agent for every session: O(sessions x agents
log agents). :func:`place_queue` keeps, per resource group and per container
shape (CPU, memory, GPU per container), a heap of the agents ordered as
:func:`~.scheduler.place` ranks them, the room each has for that shape and their
sum. A session then costs O(log agents) (plus O(log agents) per known shape of its
group for each agent it takes room on), a new shape O(agents) once. Only a
multi-node session that fits on no single agent while its group has room in total
is placed by :func:`~.scheduler.place` over every agent (the spread is rare and
needs the full ranking).
"""

from __future__ import annotations

import heapq
from collections.abc import Generator, Iterable, Sequence
from dataclasses import dataclass, field, replace

from .models import ClusterMode, LaunchSpec
from .resources import Resources
from .scheduler import (
    AgentSlot,
    Placement,
    _assign,
    check_ever_fits,
    empty_fits,
    fits_in,
    place,
)
from .waiting_reasons import (
    DESCRIBED_AGENTS,
    Pending,
    multi_node_pending,
    single_node_pending,
    swarm_pending,
)

Result = Placement | Pending


def waiting_behind(spec: LaunchSpec, count: int) -> Pending:
    """The reason of a session queued behind ``count`` waiting ones of its group."""
    return Pending(
        f"waiting behind {count} earlier session(s) of resource group {spec.resource_group} "
        "(first in, first out)"
    )


def _take(slot: AgentSlot, per: Resources, count: int, gpu_ids: Iterable[str]) -> AgentSlot:
    """``slot`` with ``count`` more containers of ``per`` (and ``gpu_ids``) in use,
    added one container at a time as the store adds up what sessions hold."""
    cpu, mem = slot.used.cpu, slot.used.mem
    for _ in range(count):
        cpu, mem = cpu + per.cpu, mem + per.mem
    gpus = slot.used_gpu_ids | frozenset(gpu_ids)
    return replace(slot, used=Resources(cpu, mem, 0, len(gpus)), used_gpu_ids=gpus)


def _apply(
    slots: list[AgentSlot], index: dict[str, int], spec: LaunchSpec, p: Placement
) -> set[int]:
    """Count a placement's containers as used in ``slots``; the indexes changed."""
    changed: dict[int, tuple[int, list[str]]] = {}
    for agent_id, gpus in zip(p.agents, p.gpu_ids, strict=True):
        i = index[agent_id]
        count, ids = changed.get(i, (0, []))
        changed[i] = (count + 1, [*ids, *gpus])
    for i, (count, ids) in changed.items():
        slots[i] = _take(slots[i], spec.resources, count, ids)
    return set(changed)


def place_each(
    specs: Sequence[LaunchSpec], agents: Sequence[AgentSlot], *, backfill: bool = False
) -> list[Result]:
    """The reference: :func:`~.scheduler.place` for each session in queue order."""
    slots = list(agents)
    index = {a.id: i for i, a in enumerate(slots)}
    waiting: dict[str, int] = {}
    results: list[Result] = []
    for spec in specs:
        behind = waiting.get(spec.resource_group, 0)
        result = waiting_behind(spec, behind) if behind and not backfill else place(spec, slots)
        if isinstance(result, Pending):
            waiting[spec.resource_group] = behind + 1
        else:
            _apply(slots, index, spec, result)
        results.append(result)
    return results


@dataclass
class _Shape:
    """The agents of one group ranked for one container shape, and their room for it."""

    per: Resources
    members: list[int]
    heap: list[tuple[int, float, str, int, int]] = field(default_factory=list)
    fits: dict[int, int] = field(default_factory=dict)
    total: int = 0  # the sum of ``fits``
    swarms: dict[str, int] = field(default_factory=dict)  # the sum of ``fits`` per Swarm
    ever: tuple[int, int] = (0, 0)  # the most one / all could hold when empty


class _Queue:
    """The agents' current usage, and one :class:`_Shape` per (group, shape) seen."""

    def __init__(self, agents: Sequence[AgentSlot]) -> None:
        self.slots = list(agents)
        self.index = {a.id: i for i, a in enumerate(self.slots)}
        self.version = [0] * len(self.slots)
        self.shapes: dict[tuple[str, Resources], _Shape] = {}
        self.by_group: dict[str, list[_Shape]] = {}
        self.stuck: dict[str, Result] = {}  # groups whose answer never changes
        self.groups: dict[str, tuple[list[AgentSlot], list[str]]] = {}

    def group(self, name: str) -> tuple[list[AgentSlot], list[str]]:
        """The group's agents with the image (as given: capacity only) and those down."""
        found = self.groups.get(name)
        if found is None:
            with_image = [a for a in self.slots if a.resource_group == name and a.has_image]
            found = (with_image, [a.id for a in with_image if not a.schedulable])
            self.groups[name] = found
        return found

    def _entry(self, i: int, shape: _Shape) -> tuple[int, float, str, int, int]:
        slot = self.slots[i]
        # As AgentSlot.free() computes it, without building its Resources.
        cpu = round(slot.capacity.cpu - slot.used.cpu, 6)
        gpus = sum(1 for g in slot.gpu_ids if g not in slot.used_gpu_ids) if slot.gpu_ids else 0
        fits = fits_in(shape.per, cpu, slot.capacity.mem - slot.used.mem, gpus)
        old = shape.fits.get(i, 0)
        shape.fits[i] = fits
        shape.total += fits - old
        if slot.swarm:
            shape.swarms[slot.swarm] = shape.swarms.get(slot.swarm, 0) + fits - old
        return (-fits, -cpu, slot.id, self.version[i], i)

    def shape(self, spec: LaunchSpec) -> _Shape:
        """The index of the spec's group and shape (built on first use, O(agents))."""
        key = (spec.resource_group, spec.resources)
        found = self.shapes.get(key)
        if found is None:
            group = [i for i, a in enumerate(self.slots) if a.resource_group == key[0]]
            with_image = [i for i in group if self.slots[i].has_image]
            found = _Shape(spec.resources, [i for i in with_image if self.slots[i].schedulable])
            empties = [empty_fits(self.slots[i], spec.resources) for i in with_image]
            found.ever = (max(empties, default=0), sum(empties))
            found.heap = [self._entry(i, found) for i in found.members]
            heapq.heapify(found.heap)
            self.shapes[key] = found
            self.by_group.setdefault(key[0], []).append(found)
        return found

    def ranked(self, shape: _Shape) -> Generator[int, None, None]:
        """The shape's agents, roomiest first, as :func:`~.scheduler.place` ranks them.

        Stale entries are dropped; those taken are put back when the caller stops.
        """
        taken: list[tuple[int, float, str, int, int]] = []
        try:
            while shape.heap:
                entry = heapq.heappop(shape.heap)
                if entry[3] == self.version[entry[4]]:
                    taken.append(entry)
                    yield entry[4]
        finally:
            for entry in taken:
                heapq.heappush(shape.heap, entry)

    def top(self, shape: _Shape, k: int) -> list[int]:
        """The ``k`` roomiest agents for the shape, roomiest first."""
        found: list[int] = []
        ranked = self.ranked(shape)
        for i in ranked:
            found.append(i)
            if len(found) == k:
                break
        ranked.close()
        return found

    def spread(self, spec: LaunchSpec, shape: _Shape) -> Placement | None:
        """A multi-node session over the agents of the Swarm with the most room, as
        :func:`~.scheduler.place` spreads it; None when no Swarm has room enough."""
        most = max(shape.swarms.values(), default=0)
        if most < spec.size:
            return None
        tied = {name for name, room in shape.swarms.items() if room == most}
        plan: list[tuple[AgentSlot, int]] = []
        remaining, swarm = spec.size, ""
        ranked = self.ranked(shape)
        for i in ranked:
            slot = self.slots[i]
            if not swarm and slot.swarm in tied:
                swarm = slot.swarm  # on a tie, the Swarm of the better-ranked agent
            if slot.swarm != swarm or not swarm:
                continue
            take = min(shape.fits[i], remaining)
            if take > 0:
                plan.append((slot, take))
                remaining -= take
            if remaining == 0:
                break
        ranked.close()
        return _assign(spec, plan)

    def apply(self, spec: LaunchSpec, placement: Placement) -> None:
        """Count the placement as used and re-rank the agents it took room on."""
        for i in _apply(self.slots, self.index, spec, placement):
            self.version[i] += 1
            for shape in self.by_group.get(self.slots[i].resource_group, ()):
                if i in shape.fits:
                    heapq.heappush(shape.heap, self._entry(i, shape))

    def place(self, spec: LaunchSpec) -> Result:
        """What :func:`~.scheduler.place` would answer for ``spec`` now."""
        group = spec.resource_group
        if group in self.stuck:
            return self.stuck[group]
        shape = self.shape(spec)
        if not shape.members:  # no such group / image (raises), or every agent down
            result = place(spec, self.slots)
            self.stuck[group] = result
            return result
        with_image, down = self.group(group)
        if shape.ever[0] < spec.size or shape.ever[1] < spec.size:
            check_ever_fits(spec, with_image, *shape.ever)  # raises if it never fits
        (best,) = self.top(shape, 1)
        if shape.fits[best] >= spec.size:
            return _assign(spec, [(self.slots[best], spec.size)])
        multi = spec.mode is ClusterMode.MULTI_NODE
        if multi and shape.total >= spec.size:  # a spread, or only across Swarms
            spanned = [self.slots[i] for i in shape.members]
            return self.spread(spec, shape) or swarm_pending(spec, spanned)
        ranked = [self.slots[i] for i in self.top(shape, DESCRIBED_AGENTS)]
        pending = multi_node_pending if multi else single_node_pending
        return pending(spec, ranked, len(shape.members), down)


def place_queue(
    specs: Sequence[LaunchSpec], agents: Sequence[AgentSlot], *, backfill: bool = False
) -> list[Result]:
    """Place a queue of sessions on ``agents`` (their usage before the queue) in order.

    The same results as :func:`place_each`, in O(sessions x log agents) for a
    queue of a few container shapes. Raises :class:`~..errors.InvalidRequest` for a
    session that could never fit, as :func:`~.scheduler.place` does.
    """
    queue = _Queue(agents)
    waiting: dict[str, int] = {}
    results: list[Result] = []
    for spec in specs:
        behind = waiting.get(spec.resource_group, 0)
        result = waiting_behind(spec, behind) if behind and not backfill else queue.place(spec)
        if isinstance(result, Pending):
            waiting[spec.resource_group] = behind + 1
        else:
            queue.apply(spec, result)
        results.append(result)
    return results
