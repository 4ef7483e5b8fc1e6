"""The index behind :func:`~.queue.place_queue`: agents ranked per group, shape and image.

:class:`_Queue` keeps, per resource group, container shape and view of the agents
(which may run the session's image; only those that have it), a heap of the agents
ordered as :func:`~.scheduler.place` ranks them and the room each has, so placing
a session costs O(log agents); :mod:`.queue_usage` counts what it places as used.
Pure; only :mod:`.queue` uses it.
"""

from __future__ import annotations

import heapq
from collections.abc import Generator, Mapping, Sequence
from dataclasses import dataclass, field, replace

from ..errors import InvalidRequest
from .models import ClusterMode, LaunchSpec
from .queue_usage import Result, apply_placement, image_flags
from .resources import Resources
from .scheduler import (
    AgentSlot,
    Placement,
    _assign,
    check_ever_fits,
    empty_fits,
    fits_in,
    place_on,
)
from .waiting_reasons import (
    DESCRIBED_AGENTS,
    Pending,
    multi_node_pending,
    single_node_pending,
    swarm_pending,
)


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
    hosted: bool = False  # host-network agents: one container each, no Swarm needed


#: Which agents a session may use: (image or "" for the agents as given, local only).
_View = tuple[str, bool]


class _Queue:
    """The agents' current usage, and one :class:`_Shape` per (group, shape, view) seen."""

    def __init__(
        self, agents: Sequence[AgentSlot], images: Mapping[str, Sequence[AgentSlot]] | None
    ) -> None:
        self.slots = list(agents)
        self.index = {a.id: i for i, a in enumerate(self.slots)}
        self.version = [0] * len(self.slots)
        self.views = image_flags(self.slots, images)
        as_given = tuple(a.has_image for a in self.slots)
        self.views[""] = (as_given, tuple(a.image_local for a in self.slots))
        self.shapes: dict[tuple[str, Resources, _View], _Shape] = {}
        self.by_group: dict[str, list[_Shape]] = {}
        # groups whose answer never changes in this pass (or the error they raise)
        self.stuck: dict[tuple[str, _View], Result | InvalidRequest] = {}
        self.groups: dict[tuple[str, _View], tuple[list[AgentSlot], list[str]]] = {}
        self.mixed: dict[tuple[str, str], bool] = {}
        # Why sessions of one kind wait, and how many placements had been made then:
        # room only shrinks during a pass, so the same answer holds until the next.
        self.applied = 0
        self.waits: dict[tuple[object, ...], tuple[int, Result]] = {}

    def can_run(self, view: _View) -> tuple[bool, ...]:
        """Per agent, whether the view lets a session use it."""
        has, local = self.views[view[0]]
        return local if view[1] else has

    def flagged(self, view: _View) -> list[AgentSlot]:
        """The agents as the scheduler would see them in ``view``."""
        has, local = self.views[view[0]]
        ok = local if view[1] else has
        return [
            a if a.has_image == h and a.image_local == x else replace(a, has_image=h, image_local=x)
            for a, h, x in zip(self.slots, ok, local, strict=True)
        ]

    def group(self, name: str, view: _View) -> tuple[list[AgentSlot], list[str]]:
        """The group's agents with the image (as given: capacity only) and those down."""
        found = self.groups.get((name, view))
        if found is None:
            ok = self.can_run(view)
            with_image = [a for i, a in enumerate(self.slots) if a.resource_group == name and ok[i]]
            found = (with_image, [a.id for a in with_image if not a.schedulable])
            self.groups[(name, view)] = found
        return found

    def _entry(self, i: int, shape: _Shape) -> tuple[int, float, str, int, int]:
        slot = self.slots[i]
        # As AgentSlot.free() and fits() compute it, without building its Resources.
        cpu = round(slot.capacity.cpu - slot.used.cpu, 6)
        gpus = sum(1 for g in slot.gpu_ids if g not in slot.used_gpu_ids) if slot.gpu_ids else 0
        fits = fits_in(shape.per, cpu, slot.capacity.mem - slot.used.mem, gpus)
        if slot.one_container:
            fits = min(fits, 1) if slot.containers == 0 else 0
        old = shape.fits.get(i, 0)
        shape.fits[i] = fits
        shape.total += fits - old
        if slot.swarm:
            shape.swarms[slot.swarm] = shape.swarms.get(slot.swarm, 0) + fits - old
        return (-fits, -cpu, slot.id, self.version[i], i)

    def shape(self, spec: LaunchSpec, view: _View) -> _Shape:
        """The index of the spec's group and shape (built on first use, O(agents))."""
        key = (spec.resource_group, spec.resources, view)
        found = self.shapes.get(key)
        if found is None:
            ok = self.can_run(view)
            group = [i for i, a in enumerate(self.slots) if a.resource_group == key[0]]
            with_image = [i for i in group if ok[i]]
            found = _Shape(spec.resources, [i for i in with_image if self.slots[i].schedulable])
            found.hosted = any(self.slots[i].one_container for i in found.members)
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
        """A multi-node session over the agents of the Swarm with the most room (any
        agents of a host-network group), as :func:`~.scheduler.place` spreads it;
        None when no Swarm has room enough."""
        tied: set[str] = set()
        if not shape.hosted:
            most = max(shape.swarms.values(), default=0)
            if most < spec.size:
                return None
            tied = {name for name, room in shape.swarms.items() if room == most}
        plan: list[tuple[AgentSlot, int]] = []
        remaining, swarm = spec.size, ""
        ranked = self.ranked(shape)
        for i in ranked:
            slot = self.slots[i]
            if not shape.hosted:
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
        return _assign(spec, plan) if remaining == 0 else None

    def apply(self, spec: LaunchSpec, placement: Placement) -> None:
        """Count the placement as used and re-rank the agents it took room on."""
        self.applied += 1
        for i in apply_placement(self.slots, self.index, spec, placement):
            self.version[i] += 1
            for shape in self.by_group.get(self.slots[i].resource_group, ()):
                if i in shape.fits:
                    heapq.heappush(shape.heap, self._entry(i, shape))

    def is_mixed(self, group: str, image: str) -> bool:
        """Whether an agent of the group could run the image only after pulling it
        (then agents that have it are tried first, as :func:`~.scheduler.place` does)."""
        found = self.mixed.get((group, image))
        if found is None:
            has, local = self.views[image]
            found = any(
                h and not x
                for a, h, x in zip(self.slots, has, local, strict=True)
                if a.resource_group == group
            )
            self.mixed[(group, image)] = found
        return found

    def place(self, spec: LaunchSpec) -> Result:
        """What :func:`~.scheduler.place` would answer for ``spec`` now (raises as it)."""
        image = spec.image if spec.image in self.views else ""
        kind = (spec.resource_group, spec.resources, spec.size, spec.mode, image)
        known = self.waits.get(kind)
        if known is not None and known[0] == self.applied:
            return known[1]
        result: Result | None = None
        if self.is_mixed(spec.resource_group, image):
            try:
                result = self.place_in(spec, (image, True))
            except InvalidRequest:
                result = None
        if not isinstance(result, Placement):
            result = self.place_in(spec, (image, False))
        if isinstance(result, Pending):
            self.waits[kind] = (self.applied, result)
        return result

    def place_in(self, spec: LaunchSpec, view: _View) -> Result:
        """:func:`~.scheduler.place_on` for ``spec`` on the agents of ``view``."""
        group = spec.resource_group
        stuck = self.stuck.get((group, view))
        if isinstance(stuck, InvalidRequest):
            raise stuck
        if stuck is not None:
            return stuck
        shape = self.shape(spec, view)
        if not shape.members:  # no such group / image (raises), or every agent down
            try:
                result = place_on(spec, self.flagged(view))
            except InvalidRequest as exc:
                self.stuck[(group, view)] = exc
                raise
            self.stuck[(group, view)] = result
            return result
        with_image, down = self.group(group, view)
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
