"""The warm pool's decisions: which sets to prepare, which a launch may take, which to
give up. Pure; the engine's :mod:`~jupyter_cluster.engine.warm_pool` does the IO.

A *warm set* is what a session of one *shape* (image, per-container resources, size;
and, when it has them, its owner's data folders, its notebook's folder and its GPUs)
needs on one agent, made and started ahead of any session: a private network and the
containers ``main1``, ``sub1``, … on it (Docker fixes a container's hostname, network
aliases and published ports at creation, so they are made as what they will be). Its
containers wait, doing nothing, until a launch of that shape placed on the same
agents takes the whole set; the launch then gives them the session's keys, files and
environment. A shape no agent can hold alone is kept as sets spread over agents on
an overlay network (:mod:`.warm_spread`).

Bind mounts and GPUs are fixed at creation too, so a set is made for them and taken
only by an exact match: the shape names the folders and the owner they resolve for
(a set made with one owner's folders is never another's), and the set records what
they resolved to (:attr:`WarmSet.fit`, the bind mounts' sources and the folders'
identity) and the GPU ids each container holds (the ones the scheduler gives next).

The scheduler counts no capacity for warm sets: a session is placed as if they did
not exist (but on an agent with a ready set of its shape first, see
:func:`place_key`), and the sets that would then overcommit its agent or hold its
GPUs are removed (:mod:`.warm_room`'s ``to_evict``). So the pool never holds capacity
a waiting session needs; it only grows into capacity that is free (``refill_plan``), and
not at all while a session of its group waits. Besides the configured targets, the
adaptive pool keeps sets of the shapes launched lately (:func:`recent_targets`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import InvalidRequest
from . import naming
from .images import check_reference
from .launch_spec import LaunchSpec
from .models import Session
from .resources import Mount, Resources

_ALLOWED = frozenset(
    {"image", "cpu", "mem", "shm", "gpu", "size", "count", "resource_group"}
    | {"mounts", "owner", "workdir"}
)


@dataclass(frozen=True)
class WarmShape:
    """What a warm set is made for: an image, per-container resources, a size; data
    folders (``mounts``) as ``owner`` sees them, and the notebook's folder."""

    image: str
    resources: Resources
    size: int = 1
    owner: str = ""
    mounts: tuple[Mount, ...] = ()
    workdir: str | None = None

    @property
    def key(self) -> str:
        """A stable text for labels and the store (``image|cpu|mem|shm|size``, then
        ``|gpu=N`` and the owner, folders and notebook folder when it has them)."""
        r = self.resources
        key = f"{self.image}|{r.cpu:g}|{r.mem}|{r.shm}|{self.size}"
        if r.gpu:
            key += f"|gpu={r.gpu}"
        if self.mounts or self.workdir:
            folders = ",".join(f"{m.name}:{'ro' if m.readonly else 'rw'}" for m in self.mounts)
            key += f"|owner={self.owner}|mounts={folders}|workdir={self.workdir or ''}"
        return key

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
    agent of ``resource_group`` (every agent when empty); of a shape no agent holds
    alone, ``count`` spread sets per group (:mod:`.warm_spread`)."""

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
    #: What its bind mounts resolved to when made ("" without any): see ``mount_fit``.
    fit: str = ""
    #: The GPU ids each of its containers holds, in host order.
    gpu_ids: tuple[tuple[str, ...], ...] = ()
    #: The agent of each of its containers, in host order (``agent`` is main1's); a
    #: set made before sets could span agents has none recorded.
    layout: tuple[str, ...] = ()

    @property
    def gpus(self) -> frozenset[str]:
        """Every GPU id the set holds."""
        return frozenset(g for ids in self.gpu_ids for g in ids)

    @property
    def agents(self) -> frozenset[str]:
        """Every agent the set has a container on."""
        return frozenset(self.layout or (self.agent,))

    @property
    def spread(self) -> bool:
        """Whether its containers are on more than one agent (an overlay network)."""
        return len(self.agents) > 1

    def held_on(self, agent_id: str) -> Resources:
        """What the set holds of ``agent_id``: its containers there, at their limits."""
        if not self.layout or len(self.agents) == 1:
            return self.total if agent_id == self.agent else Resources(0, 0, 0, 0)
        k, n, t = self.layout.count(agent_id), len(self.layout), self.total
        return Resources(t.cpu * k / n, t.mem * k // n, 0, t.gpu * k // n)

    def gpus_on(self, agent_id: str) -> frozenset[str]:
        """The GPU ids the set holds of ``agent_id`` (ids are per agent)."""
        if not self.layout:
            return self.gpus if agent_id == self.agent else frozenset()
        on = zip(self.layout, self.gpu_ids or [()] * len(self.layout), strict=True)
        return frozenset(g for a, ids in on if a == agent_id for g in ids)


def place_key(shape_key: str) -> str:
    """A shape key without its owner: what the scheduler matches a launch spec (which
    names no owner) against to prefer an agent with a ready set (the owner is
    checked when the set is taken)."""
    return re.sub(r"\|owner=[^|]*\|", "|owner=|", shape_key)


def spec_place_key(spec: LaunchSpec) -> str:
    """:func:`place_key` of the shape a session of ``spec`` would take."""
    return place_key(
        WarmShape(spec.image, spec.resources, spec.size, "", spec.mounts, spec.workdir).key
    )


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
                cpu=entry.get("cpu", 1.0),
                mem=entry.get("mem", "1g"),
                shm=entry.get("shm", "64m"),
                gpu=entry.get("gpu", 0),
            )
            mounts = tuple(Mount.parse(m) for m in entry.get("mounts") or ())
            image = str(entry.get("image") or default_image)
            check_reference(image)
        except InvalidRequest as exc:
            raise InvalidRequest(f"{where}: {exc}", "warm_pool") from exc
        workdir = entry.get("workdir") or None
        if workdir is not None and not str(workdir).startswith("/"):
            raise InvalidRequest(f"{where}: workdir must be an absolute path", "warm_pool")
        size, count = entry.get("size", 1), entry.get("count", 1)
        if not isinstance(size, int) or not 1 <= size <= max_size:
            raise InvalidRequest(f"{where}: size must be 1 to {max_size}", "warm_pool")
        if not isinstance(count, int) or not 0 <= count <= 64:
            raise InvalidRequest(f"{where}: count must be 0 to 64 (sets per agent)", "warm_pool")
        owner = str(entry.get("owner") or "")
        shape = WarmShape(image, resources, size, owner, mounts, workdir and str(workdir))
        targets.append(WarmTarget(shape, count, str(entry.get("resource_group") or "")))
    return targets


def shape_of(session: Session) -> WarmShape | None:
    """The shape of a placed session (its set must also have its layout, see
    :func:`layout_of`), or None when it is not placed yet. Folders are the owner's:
    the shape names the owner only when it has some."""
    if not session.containers or not all(c.agent for c in session.containers):
        return None
    return launch_shape(session.spec, session.owner)


def launch_shape(spec: LaunchSpec, owner: str) -> WarmShape:
    """The shape of a launch of ``spec`` by ``owner`` (see :func:`shape_of`)."""
    owner = owner if spec.mounts or spec.workdir else ""
    return WarmShape(spec.image, spec.resources, spec.size, owner, spec.mounts, spec.workdir)


def layout_of(session: Session) -> tuple[str, ...]:
    """The agent of each of a placed session's containers, in host order: a warm set
    is taken only by a session placed exactly as it was made."""
    return tuple(c.agent or "" for c in session.containers)


def gpus_of(session: Session) -> tuple[tuple[str, ...], ...]:
    """The GPU ids the scheduler gave each of a placed session's containers."""
    return tuple(c.gpu_ids for c in session.containers) if session.spec.resources.gpu else ()


def pick_gpus(
    agent_gpus: Sequence[str], held: frozenset[str], shape: WarmShape
) -> tuple[tuple[str, ...], ...] | None:
    """The GPU ids a new set of ``shape`` holds, per host: the lowest free ones, as
    the scheduler gives them (so the next session of that shape is given exactly
    these); None when too few are free. ``held``: ids of sessions and other sets."""
    k = shape.resources.gpu
    if not k:
        return ()
    free = [g for g in agent_gpus if g not in held]
    if len(free) < k * shape.size:
        return None
    return tuple(tuple(free[i * k : (i + 1) * k]) for i in range(shape.size))


def recent_targets(
    launches: Sequence[tuple[float, WarmShape, str]],
    now: float,
    window: float,
    per_shape: int,
    max_sets: int,
    configured: Sequence[WarmTarget] = (),
) -> list[WarmTarget]:
    """The adaptive pool's targets: ``per_shape`` sets of each shape launched in the
    last ``window`` seconds (``launches``: when, shape, resource group), most recent
    first, at most ``max_sets`` sets per agent in all; shapes the configured targets
    keep already are left out."""
    have = {(t.shape.key, t.resource_group) for t in configured}
    targets: list[WarmTarget] = []
    left = max_sets
    for when, shape, group in sorted(launches, key=lambda x: -x[0]):
        if when < now - window or left <= 0 or per_shape <= 0:
            break
        if (shape.key, group) in have or (shape.key, "") in have:
            continue
        have.add((shape.key, group))
        count = min(per_shape, left)
        targets.append(WarmTarget(shape, count, group))
        left -= count
    return targets
