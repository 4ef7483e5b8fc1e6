"""The order a resource group's waiting sessions are placed in, as the site chooses it.

``ClusterManager.queue_order`` picks one of :data:`ORDERS`:

- ``fifo``: first in, first out (creation time, then id);
- ``priority``: the higher :attr:`~.launch_spec.LaunchSpec.priority` first, first in
  first out among equals;
- ``fair-share``: dominant-resource fair share across owners: the owner whose
  dominant share (the largest of their CPU, memory and GPU held in the group,
  each as a share of the group's capacity) is the smallest goes next; each owner's
  sessions stay in creation order, and ties go to the earlier session. Each session
  ordered counts as held by its owner for the rest of the order (as DRF grants
  resources one task at a time), so one owner's long queue interleaves with
  the others' instead of going first as a block.

Pure: the store's queue pass (:meth:`~jupyter_cluster.engine.store.placing.
PlacingStore.place_waiting`) orders its waiting sessions with :func:`order_queue`
and hands them to :func:`~.queue.place_queue`.
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from .launch_spec import LaunchSpec
from .resources import Resources

ORDERS = ("fifo", "priority", "fair-share")
#: How a waiting reason names each order.
LABELS = {"fifo": "first in, first out", "priority": "priority", "fair-share": "fair share"}
_ZERO = Resources(0, 0, 0, 0)


@dataclass(frozen=True)
class Waiting:
    """A PENDING session as the queue sees it."""

    id: str
    owner: str
    created_at: float
    spec: LaunchSpec

    @property
    def fifo_key(self) -> tuple[float, str]:
        """Creation time, then id: the first-in-first-out order."""
        return (self.created_at, self.id)

    def demand(self) -> Resources:
        """What all its containers hold once placed."""
        per, n = self.spec.resources, self.spec.size
        return Resources(per.cpu * n, per.mem * n, per.shm * n, per.gpu * n)


def dominant_share(held: Resources, capacity: Resources) -> float:
    """The largest of ``held``'s CPU, memory and GPU as a share of ``capacity`` (a
    resource the group has none of counts as no share)."""
    shares = [
        held.cpu / capacity.cpu if capacity.cpu > 0 else 0.0,
        held.mem / capacity.mem if capacity.mem > 0 else 0.0,
        held.gpu / capacity.gpu if capacity.gpu > 0 else 0.0,
    ]
    return max(shares)


def fair_share(
    waiting: Sequence[Waiting], capacity: Resources, held: Mapping[str, Resources]
) -> list[Waiting]:
    """One group's sessions in dominant-resource fair-share order (see the module
    docstring); ``held``: what each owner holds in the group now."""
    queues: dict[str, list[Waiting]] = {}
    for w in sorted(waiting, key=lambda w: w.fifo_key):
        queues.setdefault(w.owner, []).append(w)
    cap = (capacity.cpu, capacity.mem, capacity.gpu)

    def share(h: list[float]) -> float:  # dominant_share without building Resources
        return max(h[k] / cap[k] if cap[k] > 0 else 0.0 for k in range(3))

    now: dict[str, list[float]] = {}
    heap = []
    for owner, q in queues.items():
        had = held.get(owner, _ZERO)
        now[owner] = [had.cpu, had.mem, had.gpu]
        heap.append((share(now[owner]), q[0].fifo_key, owner))
    heapq.heapify(heap)
    nexts = dict.fromkeys(queues, 0)
    ordered: list[Waiting] = []
    while heap:
        _, _, owner = heapq.heappop(heap)
        q, i = queues[owner], nexts[owner]
        w = q[i]
        ordered.append(w)
        r, n, mine = w.spec.resources, w.spec.size, now[owner]
        mine[0] += r.cpu * n
        mine[1] += r.mem * n
        mine[2] += r.gpu * n
        nexts[owner] = i + 1
        if i + 1 < len(q):
            heapq.heappush(heap, (share(mine), q[i + 1].fifo_key, owner))
    return ordered


def order_queue(
    waiting: Sequence[Waiting],
    order: str,
    capacity: Mapping[str, Resources] | None = None,
    held: Mapping[tuple[str, str], Resources] | None = None,
) -> list[Waiting]:
    """The waiting sessions in the order they are placed, each resource group's
    in ``order`` (groups follow one another; their queues are independent).

    ``capacity``: each group's total (fair share only); ``held``: what each
    ``(group, owner)`` holds now (fair share only). Raises ValueError for an
    unknown order.
    """
    if order not in ORDERS:
        raise ValueError(f"unknown queue order {order!r}; use one of {', '.join(ORDERS)}")
    by_group: dict[str, list[Waiting]] = {}
    for w in waiting:
        by_group.setdefault(w.spec.resource_group, []).append(w)
    ordered: list[Waiting] = []
    for group in sorted(by_group):
        members = by_group[group]
        if order == "fifo":
            ordered += sorted(members, key=lambda w: w.fifo_key)
        elif order == "priority":
            ordered += sorted(members, key=lambda w: (-w.spec.priority, *w.fifo_key))
        else:
            mine = {o: r for (g, o), r in (held or {}).items() if g == group}
            ordered += fair_share(members, (capacity or {}).get(group, _ZERO), mine)
    return ordered
