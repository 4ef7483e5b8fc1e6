"""A new launch placed alone when it is first in its group's queue order.

A queue pass (:meth:`~.placing.PlacingStore.place_waiting`) tries a resource group's
waiting sessions in the site's order; the first one is placed on the room there
is now, whatever comes after it. So when a just-submitted session would come
first in its group's order (FIFO: nobody of its group waits; priority: everyone
waiting has a lower one; fair share: its owner holds the smallest dominant share
of everyone waiting in the group), placing it alone decides exactly what a pass
would decide for it, without ordering and trying the whole queue.
:class:`~..launching.SessionLauncher` calls :meth:`FirstPlacing.place_if_first`
at submit and falls back to a whole pass when it answers None.

:meth:`FirstPlacing.preview` asks the same question of a launch not yet made, in
a read transaction that changes nothing (a dry run:
:meth:`~..launching.SessionLauncher.preview`): the owner's quota, whether it would
come first, and, if so or with backfill, where the scheduler would put it.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from ...core import state
from ...core.launch_check import LaunchCheck
from ...core.launch_spec import LaunchSpec
from ...core.models import Session
from ...core.queue_order import LABELS, Waiting, dominant_share, order_queue
from ...core.quota import Quota
from ...core.resources import Resources
from ...errors import Conflict, InvalidRequest
from .queue_rows import Held, QueueRows
from .rows import OWNED, refuse_taken_name, status_in

if TYPE_CHECKING:  # imported where it places: every CLI start reads the store
    from ...core.scheduler import AgentSlot, Pending, Placement

_ZERO = Resources(0, 0, 0, 0)


def _is_first(mine: Waiting, others: Sequence[Waiting], order: str, held: Held) -> bool:
    """Whether ``mine`` comes first among its group's waiting sessions in ``order``."""
    if order == "priority":
        return all(
            (-o.spec.priority, *o.fifo_key) > (-mine.spec.priority, *mine.fifo_key) for o in others
        )
    if order != "fair-share" or not others:
        return all(o.fifo_key > mine.fifo_key for o in others)
    group = mine.spec.resource_group
    capacity = held.capacity.get(group, _ZERO)
    firsts: dict[str, tuple[float, str]] = {}
    for o in others:
        key = o.fifo_key
        if o.owner not in firsts or key < firsts[o.owner]:
            firsts[o.owner] = key
    if mine.owner in firsts and firsts[mine.owner] < mine.fifo_key:
        return False  # its owner's earlier session goes before it

    def share(owner: str) -> float:
        return dominant_share(held.owners.get((group, owner), _ZERO), capacity)

    me_key = (share(mine.owner), mine.fifo_key)
    return all((share(owner), key) > me_key for owner, key in firsts.items() if owner != mine.owner)


def capacity_per_group(agents: Sequence[AgentSlot]) -> dict[str, Resources]:
    """The CPUs, memory and GPUs of each resource group's agents, summed."""
    sums: dict[str, list[float]] = {}
    for a in agents:
        total = sums.get(a.resource_group)
        if total is None:
            total = sums[a.resource_group] = [0.0, 0, 0]
        total[0] += a.capacity.cpu
        total[1] += a.capacity.mem
        total[2] += len(a.gpu_ids)
    return {g: Resources(cpu, int(mem), 0, int(gpu)) for g, (cpu, mem, gpu) in sums.items()}


class FirstPlacing(QueueRows):
    """The submit-time shortcut of the queue (see the module docstring)."""

    def place_if_first(
        self,
        session_id: str,
        agents: Sequence[AgentSlot],
        *,
        order: str = "fifo",
        backfill: bool = False,
    ) -> Placement | Pending | None:
        """In one write transaction: place the PENDING session ``session_id`` on
        ``agents`` (as ``slots(image)`` gives them for its image) if it comes first
        in its group's queue ``order``, or give it its waiting reason (1st in the
        queue) if it does not fit; None (nothing changed) when it does not come
        first, is no longer PENDING, or can never fit (a whole pass decides then)."""
        from ...core.scheduler import Placement, place
        from ...core.waiting_reasons import queue_reason

        began, clock = time.time(), time.monotonic()
        with self.tx() as db:
            rows = self._waiting_keys(db)
            me = next((r for r in rows if r.id == session_id), None)
            if me is None:
                return None
            group = me.spec.resource_group
            others = [r for r in rows if r.spec.resource_group == group and r is not me]
            held = self._held(db)
            held.capacity = capacity_per_group(agents)
            if not _is_first(me, others, order, held):
                return None
            try:
                result = place(me.spec, _holding(agents, held))
            except InvalidRequest:
                return None
            if isinstance(result, Placement):
                timings = {"queue": max(0.0, began - me.created_at)}
                timings["place"] = time.monotonic() - clock
                self._write_placed(db, [(session_id, result, timings)])
            else:
                label = LABELS[order] + (", backfill" if backfill else "")
                reason = queue_reason(me.spec, 1, label, why=result.reason)
                db.execute(
                    "UPDATE sessions SET status_reason = ? WHERE id = ?", (reason, session_id)
                )
            return result

    def preview(
        self,
        spec: LaunchSpec,
        owner: str,
        agents: Sequence[AgentSlot],
        *,
        quota: Quota | None = None,
        order: str = "fifo",
        backfill: bool = False,
    ) -> LaunchCheck:
        """What submitting ``spec`` for ``owner`` would meet now, read only: Conflict
        for a name in use or over ``quota`` (as the insert would), else where
        it would start if it came first in its group's queue ``order`` (or with
        ``backfill``) and fits, or why it would wait. The scheduler's
        :class:`InvalidRequest` (it could never fit) goes through."""
        from ...core.scheduler import Placement, place
        from ...core.waiting_reasons import queue_reason

        new = Session(id="~dry-run", spec=spec, status=state.SessionStatus.PENDING, owner=owner)
        with self.tx(write=False) as db:
            refuse_taken_name(db, spec.name, owner)
            if quota is not None and not quota.unlimited:
                live = self._select(db, f"WHERE {status_in(state.LIVE)} AND {OWNED}", (owner,))
                refusal = quota.refusal(live, new)
                if refusal:
                    raise Conflict(refusal)
            group = spec.resource_group
            rows = [r for r in self._waiting_rows(db) if r.waiting.spec.resource_group == group]
            held = self._held(db)
        held.capacity = capacity_per_group(agents)
        # Ordered as the queue pass orders its group; it came after everyone waiting.
        me = Waiting(new.id, owner, float("inf"), spec)
        ordered = order_queue([*(r.waiting for r in rows), me], order, held.capacity, held.owners)
        ahead = ordered[: ordered.index(me)]
        label = LABELS[order] + (", backfill" if backfill else "")
        result = place(spec, _holding(agents, held)) if backfill or not ahead else None
        if isinstance(result, Placement):
            return LaunchCheck.placed(result.agents)
        why = result.reason if result is not None else ""
        # The queue's head, named only to its owner (names are per owner).
        names = {r.waiting.id: r.name for r in rows if r.waiting.owner == owner}
        head = names.get(ahead[0].id, "") if ahead else ""
        return LaunchCheck.waiting(
            queue_reason(
                spec, len(ahead) + 1, label, why=why, ahead=head or "another user's session"
            )
        )


def _holding(agents: Sequence[AgentSlot], held: Held) -> list[AgentSlot]:
    """``agents`` with what ALLOCATING sessions hold on each (as the pool gave those
    that hold nothing)."""
    return [
        replace(
            a,
            used=held.used.get(a.id, _ZERO),
            used_gpu_ids=frozenset(held.gpus.get(a.id, ())),
            containers=held.counts.get(a.id, 0),
        )
        if a.id in held.counts
        else a
        for a in agents
    ]
