"""What a warm set is matched by besides its shape: the bind mounts it was made with.

Used by :mod:`.warm_make` when it makes a set (it records :func:`set_fit` of the
mounts the manager resolved for the shape's owner on each of the set's agents) and
by :mod:`.warm_pool` when a launch takes one (only a set whose mounts resolved to the
same text as the session's is taken).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

from ..core.models import Session
from ..core.state import LIVE
from ..core.warm import WarmSet, WarmShape, WarmTarget, pick_gpus
from .agents.base import BindMount

#: The bind mounts of a shape on an agent (the manager resolves the owner's folders).
MountResolver = Callable[[WarmShape, str], tuple[BindMount, ...]]


def mount_fit(mounts: Sequence[BindMount]) -> str:
    """What ``mounts`` resolve to, as text a set is matched by: each source, target
    and mode, and (where the source is on this machine) the folder's device, inode and
    change time, so a folder removed and made again under its name (which may get the
    same inode) is not the one a set holds. A folder whose top-level entries changed
    since a set was made no longer matches either: that set is remade (see
    :func:`stale_sets`), never a wrong folder given."""
    parts = []
    for m in mounts:
        try:
            st = os.stat(m.source)
            ident = f"{st.st_dev}:{st.st_ino}:{st.st_ctime_ns}"
        except OSError:
            ident = "?"
        parts.append(f"{m.source}>{m.target}:{'ro' if m.readonly else 'rw'}@{ident}")
    return ";".join(parts)


def set_fit(layout: Sequence[str], mounts: Mapping[str, Sequence[BindMount]]) -> str:
    """What the mounts of a set on ``layout`` (the agent of each host) resolve to,
    ``mounts`` being each agent's: :func:`mount_fit` for a set on one agent, and
    each agent's, named, for a set spread over several (each agent's folders are
    its own)."""
    agents = list(dict.fromkeys(layout))
    if len(agents) == 1:
        return mount_fit(mounts.get(agents[0], ()))
    return "|".join(f"{a}={mount_fit(mounts.get(a, ()))}" for a in agents)


def no_mounts(shape: WarmShape, agent_id: str) -> tuple[BindMount, ...]:
    """The resolver of a pool without folders (tests, and the default)."""
    return ()


def stale_sets(
    ready: Sequence[WarmSet], targets: Sequence[WarmTarget], resolve: MountResolver
) -> list[str]:
    """The ids of ready sets made for folders whose mounts no longer resolve as they
    did (a folder removed, made again or changed): :meth:`.WarmPool.fill` removes them
    so it can make them again."""
    shapes = {t.shape.key: t.shape for t in targets if t.shape.mounts or t.shape.workdir}
    now: dict[tuple[tuple[str, ...], str], str] = {}
    stale = []
    for w in ready:
        shape = shapes.get(w.shape_key)
        if shape is None:
            continue
        layout = w.layout or (w.agent,)
        if (layout, w.shape_key) not in now:
            try:
                mounts = {a: resolve(shape, a) for a in dict.fromkeys(layout)}
                now[layout, w.shape_key] = set_fit(layout, mounts)
            except Exception:  # the folder is gone: no set of it can serve anyone
                now[layout, w.shape_key] = ""
        if now[layout, w.shape_key] != w.fit:
            stale.append(w.set_id)
    return stale


def gpus_held(sessions: Sequence[Session]) -> dict[str, set[str]]:
    """The GPU ids live ``sessions`` were given, per agent (a set must not hold them)."""
    held: dict[str, set[str]] = {}
    for s in sessions:
        if s.status in LIVE:
            for c in s.containers:
                if c.agent and c.gpu_ids:
                    held.setdefault(c.agent, set()).update(c.gpu_ids)
    return held


def gpus_for(
    layout: tuple[str, ...],
    shape: WarmShape,
    gpus: Mapping[str, Sequence[str]],
    held: dict[str, set[str]],
) -> tuple[tuple[str, ...], ...] | None:
    """The GPU ids each host of a new set on ``layout`` (the agent of each host)
    holds: on each agent the lowest free ones, as the scheduler gives them; None when
    an agent has too few free. ``gpus``: each agent's GPU ids; ``held``: those taken
    by sessions and sets, per agent, to which the picked ones are added."""
    if not shape.resources.gpu:
        return ()
    picked: dict[str, list[tuple[str, ...]]] = {}
    for agent_id in dict.fromkeys(layout):
        free = frozenset(held.get(agent_id, ()))
        ids = pick_gpus(gpus.get(agent_id, ()), free, replace(shape, size=layout.count(agent_id)))
        if ids is None:
            return None
        picked[agent_id] = list(ids)
    for agent_id, chosen in picked.items():
        held.setdefault(agent_id, set()).update(g for per in chosen for g in per)
    return tuple(picked[a].pop(0) for a in layout)
