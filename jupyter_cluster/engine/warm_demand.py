"""The adaptive warm pool: which shapes to keep because sessions of them were launched
lately, within the bounds an administrator sets.

:class:`~.manager.ClusterManager` hands :class:`~.warm_pool.WarmPool` a
:class:`WarmDemand` reader (its ``warm_pool_adaptive``, ``warm_pool_window``,
``warm_pool_per_shape`` and ``warm_pool_max_sets`` traits, read at each refill);
:func:`demand_targets` turns the store's recent launches (the latest of each shape,
``Store.recent_launches``) into warm targets with the pure
:func:`~jupyter_cluster.core.warm.recent_targets`.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..core.models import LaunchSpec
from ..core.warm import WarmTarget, launch_shape, recent_targets


@dataclass(frozen=True)
class WarmDemand:
    """The adaptive pool's settings (off by default)."""

    on: bool = False
    window: float = 3600.0
    per_shape: int = 1
    max_sets: int = 4

    @classmethod
    def of(cls, settings: Any) -> WarmDemand:
        """Read from the manager's traits (``warm_pool_adaptive`` and the rest)."""
        return cls(
            bool(settings.warm_pool_adaptive),
            float(settings.warm_pool_window),
            int(settings.warm_pool_per_shape),
            int(settings.warm_pool_max_sets),
        )


def demand_targets(
    demand: WarmDemand,
    launches: Sequence[tuple[float, LaunchSpec, str]],
    configured: Sequence[WarmTarget],
    now: float | None = None,
) -> list[WarmTarget]:
    """Targets for the shapes of ``launches`` (when, spec, owner of placed sessions:
    the store's ``recent_launches``) made within the window; [] when the adaptive
    pool is off. Called by WarmPool at each refill."""
    if not demand.on:
        return []
    now = time.time() if now is None else now
    recent = [
        (at, launch_shape(spec, owner), spec.resource_group)
        for at, spec, owner in launches
        if at >= now - demand.window
    ]
    return recent_targets(recent, now, demand.window, demand.per_shape, demand.max_sets, configured)
