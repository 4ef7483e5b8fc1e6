"""The settings of the utilization idle clean-up: ``c.ClusterManager.*``.

:class:`UtilizationIdleSettings` is a base of
:class:`~jupyter_cluster.engine.manager.ClusterManager`, so its traits are
configured as ``c.ClusterManager.<name>``; the clean-up
(:class:`~.utilization_idle.UtilizationWatch`) reads them at every pass. An owner's
own timeout (a per-user or per-group policy) is ``utilization_idle_timeout_for``.
"""

from __future__ import annotations

from traitlets import Callable as CallableTrait
from traitlets import Float
from traitlets.config import LoggingConfigurable

from ..setting_bounds import bounded, waits


class UtilizationIdleSettings(LoggingConfigurable):
    """The traits of the utilization idle clean-up (``c.ClusterManager.*``)."""

    utilization_idle_timeout = Float(
        0.0,
        config=True,
        help="""Seconds a running session (from any front end) may stay below
        idle_cpu_threshold in every container and idle_gpu_threshold on every GPU, with
        no kernel busy, no terminal open and no exec running, before it is warned (its
        status reason) and then, utilization_idle_grace seconds later, terminated with
        a reason starting 'idle:'. Batch sessions are exempt while their command runs.
        Enforced by the Jupyter server or the shared service that owns this engine.
        0 (the default): off.""",
    )
    utilization_idle_grace = Float(
        60.0,
        config=True,
        help="Seconds between the idle warning and the termination; using the session "
        "meanwhile (CPU, GPU, kernel, terminal, exec) takes the warning away.",
    )
    idle_cpu_threshold = Float(
        5.0,
        config=True,
        help="A container using less CPU than this (percent of one CPU, as docker stats "
        "shows it; 200 = two CPUs busy), averaged between samples, counts as idle.",
    )
    idle_gpu_threshold = Float(
        5.0,
        config=True,
        help="A GPU busier than this (percent, from nvidia-smi in the container) keeps "
        "its session from being idle.",
    )
    utilization_check_interval = Float(
        30.0, config=True, help="Seconds between samples of the utilization idle clean-up."
    )
    utilization_idle_timeout_for = CallableTrait(
        None,
        allow_none=True,
        config=True,
        help="""A function owner -> seconds or None giving an owner's own idle timeout
        (e.g. from a per-user or per-group policy); None from it means the site's
        utilization_idle_timeout, 0 never. Unset: everyone has the site's.""",
    )

    _idle_waits = waits("utilization_check_interval")
    _idle_limits = bounded(0, "utilization_idle_timeout", "utilization_idle_grace", unit="seconds")
    _idle_thresholds = bounded(0, "idle_cpu_threshold", "idle_gpu_threshold", unit="a percentage")
