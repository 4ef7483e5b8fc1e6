"""The warm pool's decisions: which sets to prepare, which a launch may take, which to
give up. Pure; the engine's :mod:`~jupyter_cluster.engine.warm_pool` does the IO.

A *warm set* is what a single-node session of one *shape* (image, per-container
resources, size) needs on one agent, made and started ahead of any session: a private
network and the containers ``main1``, ``sub1``, … on it (Docker fixes a container's
hostname, network aliases and published ports at creation, so they are made as what
they will be). Its containers wait, doing nothing, until a launch of that shape takes
the whole set; the launch then gives them the session's keys, files and environment.

Warm sets are not seen by the scheduler: a session is placed as if they did not exist,
and the sets that would then overcommit its agent are removed (:func:`to_evict`). So
the pool never holds capacity a waiting session needs; it only grows into capacity that
is free (:func:`refill_plan`), and not at all while a session of its group waits.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import InvalidRequest
from . import naming
from .models import Session
from .resources import Resources

_ALLOWED = frozenset({"image", "cpu", "mem", "shm", "size", "count", "resource_group"})


@dataclass(frozen=True)
class WarmShape:
    """What a warm set is made for: an image, per-container resources, a size."""

    image: str
    resources: Resources
    size: int = 1

    @property
    def key(self) -> str:
        """A short stable text for labels and the store (``image|cpu|mem|shm|size``)."""
        r = self.resources
        return f"{self.image}|{r.cpu:g}|{r.mem}|{r.shm}|{self.size}"

    @property
    def hosts(self) -> tuple[str, ...]:
        """The host names of a set: main1, sub1, …, sub{size-1}."""
        return tuple(naming.hosts(self.size))

    @property
    def total(self) -> Resources:
        """What a whole set holds of its agent."""
        return self.resources.times(self.size)


@dataclass(frozen=True)
class WarmTarget:
    """One ``ClusterManager.warm_pool`` entry: keep ``count`` sets of ``shape`` on every
    agent of ``resource_group`` (every agent when empty)."""

    shape: WarmShape
    count: int = 1
    resource_group: str = ""


@dataclass(frozen=True)
class WarmSet:
    """A warm set the pool has, ready to be taken."""

    set_id: str
    agent: str
    shape_key: str
    total: Resources


def parse_targets(
    entries: Iterable[Mapping[str, Any]], default_image: str, max_size: int
) -> list[WarmTarget]:
    """Validate ``ClusterManager.warm_pool``; raises InvalidRequest naming the entry."""
    targets = []
    for n, entry in enumerate(entries):
        where = f"ClusterManager.warm_pool[{n}]"
        unknown = sorted(set(entry) - _ALLOWED)
        if unknown:
            allowed = ", ".join(sorted(_ALLOWED))
            raise InvalidRequest(f"{where}: unknown key {unknown[0]!r}; use {allowed}", "warm_pool")
        try:
            resources = Resources.parse(
                cpu=entry.get("cpu", 1.0), mem=entry.get("mem", "1g"), shm=entry.get("shm", "64m")
            )
        except InvalidRequest as exc:
            raise InvalidRequest(f"{where}: {exc}", "warm_pool") from exc
        size, count = entry.get("size", 1), entry.get("count", 1)
        if not isinstance(size, int) or not 1 <= size <= max_size:
            raise InvalidRequest(f"{where}: size must be 1 to {max_size}", "warm_pool")
        if not isinstance(count, int) or not 0 <= count <= 64:
            raise InvalidRequest(f"{where}: count must be 0 to 64 (sets per agent)", "warm_pool")
        shape = WarmShape(str(entry.get("image") or default_image), resources, size)
        targets.append(WarmTarget(shape, count, str(entry.get("resource_group") or "")))
    return targets


def shape_of(session: Session) -> WarmShape | None:
    """The shape of a placed session, or None when no warm set can serve it: data
    folders, the notebook's folder and GPUs are fixed when a container is created,
    and a set lives on one agent (so a session spread over several launches cold)."""
    spec = session.spec
    if spec.mounts or spec.workdir or spec.resources.gpu:
        return None
    if len({c.agent for c in session.containers}) != 1:
        return None
    return WarmShape(spec.image, spec.resources, spec.size)


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
        mine = [w for w in warm if w.agent == agent_id]
        free = _minus(capacity, used.get(agent_id, Resources(0, 0, 0, 0)))
        for held in mine:
            free = _minus(free, held.total)
        for target in targets:
            if target.resource_group and target.resource_group != group:
                continue
            have = sum(1 for w in mine if w.shape_key == target.shape.key)
            for _ in range(target.count - have):
                need = target.shape.total
                if need.cpu > free.cpu + 1e-9 or need.mem > free.mem:
                    break
                free = _minus(free, need)
                plan.append((agent_id, target.shape))
    return plan


def to_evict(
    capacity: Resources, used: Resources, warm: Sequence[WarmSet], keep_key: str = ""
) -> list[WarmSet]:
    """The warm sets of one agent to remove so that sessions (``used``) and the pool
    fit its ``capacity``; sets of other shapes than ``keep_key`` go first."""
    total = used
    for held in warm:
        total = Resources(total.cpu + held.total.cpu, total.mem + held.total.mem, 0, 0)
    evicted = []
    for held in sorted(warm, key=lambda w: w.shape_key == keep_key):  # other shapes first
        if total.cpu <= capacity.cpu + 1e-9 and total.mem <= capacity.mem:
            break
        evicted.append(held)
        total = _minus(total, held.total)
    return evicted


def _minus(a: Resources, b: Resources) -> Resources:
    return Resources(a.cpu - b.cpu, a.mem - b.mem, 0, 0)
