"""The warm pool's settings: ``c.ClusterManager.warm_pool`` and ``warm_pool_*``.

A mixin of :class:`~jupyter_cluster.engine.manager.ClusterManager`, which hands them to
its :class:`~.warm_pool.WarmPool` (the configured shapes, parsed by
:func:`jupyter_cluster.core.warm.parse_targets`, and the refill interval) and reads the
adaptive ones for each refill (:class:`~.warm_demand.WarmDemand`).
"""

from __future__ import annotations

from traitlets import Bool, Dict, Float, Int, List
from traitlets.config import LoggingConfigurable

from ..setting_bounds import bounded, waits


class WarmPoolSettings(LoggingConfigurable):
    """Which warm sets to keep, and how the pool follows demand."""

    warm_pool = List(
        Dict(),
        config=True,
        help="""Containers to keep prepared ahead, so that a launch that matches takes
        them instead of creating new ones (off when empty). One dict per shape: image
        (default: default_image), cpu, mem, shm (per container, as in a launch), size
        (prepare the host names main1 … sub{size-1}), count (warm containers of each of
        those host names per agent, default 1), resource_group (default: every agent),
        gpu (GPUs per container: the set holds the ids the scheduler gives next),
        mounts (data folders, ["name", "name:ro"]) with owner (whose folders; default
        the local user) and workdir (a notebook folder to mount). A single-node launch
        matches when its image, resources, folders and owner (when it has folders) are
        equal and its folders and GPU ids are the ones the set was made with. The pool
        is kept by the server (refilled in the background, removed when it stops), only
        in capacity that is free, and never while a session waits for room; a placed
        session removes warm containers that would overcommit its agent or hold its
        GPUs.""",
    )
    warm_pool_adaptive = Bool(
        False,
        config=True,
        help="""Also keep warm sets of the shapes launched lately (besides warm_pool):
        warm_pool_per_shape sets of each single-node shape (image, resources, size,
        folders and their owner, GPUs) a session was launched with in the last
        warm_pool_window seconds, most recent first, at most warm_pool_max_sets per
        agent; sets of shapes not launched for that long are removed.""",
    )
    warm_pool_window = Float(
        3600.0,
        config=True,
        help="Seconds a launch keeps its shape in the adaptive warm pool.",
    )
    warm_pool_per_shape = Int(
        1, config=True, help="Warm sets per agent of each shape the adaptive pool keeps."
    )
    warm_pool_max_sets = Int(
        4, config=True, help="At most this many adaptive warm sets per agent in all."
    )
    warm_pool_interval = Float(
        5.0,
        config=True,
        help="Seconds between the warm pool's refill checks (it also refills at once "
        "after a launch took containers).",
    )

    _warm_waits = waits("warm_pool_interval")
    _warm_windows = bounded(0, "warm_pool_window", unit="seconds")
    _warm_counts = bounded(0, "warm_pool_per_shape", "warm_pool_max_sets")
