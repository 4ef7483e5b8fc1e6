"""What the queue's placements return, and how a placement is counted as used.

The results of placing one waiting session (:data:`Result`: a placement, a reason
to wait, or a refusal), and the helpers :func:`~.queue.place_queue` and its index
(:mod:`.queue_index`) share: adding a placement's containers to the agents' usage,
and which agents can run each image. Pure.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from .models import LaunchSpec
from .resources import Resources
from .scheduler import AgentSlot, Placement
from .waiting_reasons import Pending


@dataclass(frozen=True)
class Refused:
    """The session can never be placed (what :func:`~.scheduler.place` would raise)."""

    reason: str


Result = Placement | Pending | Refused
#: Which agents can run an image (have it or may pull it) and which have it now.
Flags = tuple[tuple[bool, ...], tuple[bool, ...]]


def _take(slot: AgentSlot, per: Resources, count: int, gpu_ids: Iterable[str]) -> AgentSlot:
    """``slot`` with ``count`` more containers of ``per`` (and ``gpu_ids``) in use,
    added one container at a time as the store adds up what sessions hold."""
    cpu, mem = slot.used.cpu, slot.used.mem
    for _ in range(count):
        cpu, mem = cpu + per.cpu, mem + per.mem
    gpus = slot.used_gpu_ids | frozenset(gpu_ids)
    used = Resources(cpu, mem, 0, len(gpus))
    return replace(slot, used=used, used_gpu_ids=gpus, containers=slot.containers + count)


def apply_placement(
    slots: list[AgentSlot], index: dict[str, int], spec: LaunchSpec, p: Placement
) -> set[int]:
    """Count a placement's containers as used in ``slots`` (``index``: agent id to
    position); the positions changed. For :func:`~.queue.place_queue` and its index."""
    changed: dict[int, tuple[int, list[str]]] = {}
    for agent_id, gpus in zip(p.agents, p.gpu_ids, strict=True):
        i = index[agent_id]
        count, ids = changed.get(i, (0, []))
        changed[i] = (count + 1, [*ids, *gpus])
    for i, (count, ids) in changed.items():
        slots[i] = _take(slots[i], spec.resources, count, ids)
    return set(changed)


def image_flags(
    agents: Sequence[AgentSlot], images: Mapping[str, Sequence[AgentSlot]] | None
) -> dict[str, Flags]:
    """Per image, the flags of ``agents`` (in their order) as ``images`` gives them
    (see :data:`Flags`). For :func:`~.queue.place_queue` and its index."""
    views: dict[str, Flags] = {}
    for image, view in (images or {}).items():
        by_id = {a.id: a for a in view}
        has = tuple(a.id in by_id and by_id[a.id].has_image for a in agents)
        local = tuple(a.id in by_id and by_id[a.id].image_local for a in agents)
        views[image] = (has, local)
    return views
