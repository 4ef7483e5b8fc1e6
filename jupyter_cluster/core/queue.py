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
needs the full ranking). The index is :mod:`.queue_index`.

Sessions of several images are placed as :func:`~.scheduler.place` places each on
the agents as ``slots(image)`` shows them (``images``: which agents have each
image, or may pull it): on agents that have the image when they can hold it. The
store's queue pass (:meth:`~jupyter_cluster.engine.store.placing.PlacingStore.
place_waiting`) calls :func:`place_queue` with ``refuse=True``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from ..errors import InvalidRequest
from .models import LaunchSpec
from .queue_index import _Queue
from .queue_usage import Refused as Refused
from .queue_usage import Result as Result
from .queue_usage import apply_placement, image_flags
from .scheduler import AgentSlot, Placement, place
from .waiting_reasons import Pending


def waiting_behind(spec: LaunchSpec, count: int) -> Pending:
    """The reason of a session queued behind ``count`` waiting ones of its group."""
    return Pending(
        f"waiting behind {count} earlier session(s) of resource group {spec.resource_group} "
        "(first in, first out)"
    )


def place_each(
    specs: Sequence[LaunchSpec],
    agents: Sequence[AgentSlot],
    *,
    backfill: bool = False,
    images: Mapping[str, Sequence[AgentSlot]] | None = None,
) -> list[Result]:
    """The reference: :func:`~.scheduler.place` for each session in queue order, on
    the agents as ``images[spec.image]`` flags them (default: as given)."""
    slots = list(agents)
    index = {a.id: i for i, a in enumerate(slots)}
    views = image_flags(agents, images)
    waiting: dict[str, int] = {}
    results: list[Result] = []
    for spec in specs:
        behind = waiting.get(spec.resource_group, 0)
        view = slots
        if spec.image in views:
            has, local = views[spec.image]
            view = [
                replace(a, has_image=h, image_local=x)
                for a, h, x in zip(slots, has, local, strict=True)
            ]
        result = waiting_behind(spec, behind) if behind and not backfill else place(spec, view)
        if isinstance(result, Pending):
            waiting[spec.resource_group] = behind + 1
        else:
            apply_placement(slots, index, spec, result)
        results.append(result)
    return results


def place_queue(
    specs: Sequence[LaunchSpec],
    agents: Sequence[AgentSlot],
    *,
    backfill: bool = False,
    images: Mapping[str, Sequence[AgentSlot]] | None = None,
    refuse: bool = False,
) -> list[Result]:
    """Place a queue of sessions on ``agents`` (their usage before the queue) in order.

    The same results as :func:`place_each`, in O(sessions x log agents) for a
    queue of a few container shapes. ``images``: per image, the agents as
    ``slots(image)`` flags them (default: as ``agents`` are flagged). Raises
    :class:`~..errors.InvalidRequest` for a session that could never fit, as
    :func:`~.scheduler.place` does; with ``refuse`` that session's result is a
    :class:`Refused` instead, and it holds up nobody.
    """
    queue = _Queue(agents, images)
    waiting: dict[str, int] = {}
    results: list[Result] = []
    for spec in specs:
        behind = waiting.get(spec.resource_group, 0)
        result: Result
        try:
            result = waiting_behind(spec, behind) if behind and not backfill else queue.place(spec)
        except InvalidRequest as exc:
            if not refuse:
                raise
            result = Refused(str(exc))
        if isinstance(result, Pending):
            waiting[spec.resource_group] = behind + 1
        elif isinstance(result, Placement):
            queue.apply(spec, result)
        results.append(result)
    return results
