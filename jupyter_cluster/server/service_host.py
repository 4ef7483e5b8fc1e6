"""What the cluster service uses of the server extension that runs it.

:class:`ServiceHost` is the part of :class:`~jupyter_cluster.server.app.ClusterApp`
that :class:`~jupyter_cluster.server.service.ClusterService` reads: the engine and
its launch gate, the extension's settings, and the server's kernel and terminal
managers. Tests give the service a host of their own through it.
"""

from __future__ import annotations

import logging
from typing import Any, Protocol

from ..engine.api import Engine, LaunchGate


class ServiceHost(Protocol):
    """What the service uses of the server extension that runs it (``ClusterApp``)."""

    engine: Engine[Any]
    gate: LaunchGate
    log: logging.Logger
    kernel_name: str
    events_poll_interval: float
    reconcile_interval: float
    admin_users: list[str]
    admin_groups: list[str]
    kernels_here: bool
    idle_timeout: float
    stats_interval: float
    idle_check_interval: float
    max_streams_per_user: int
    max_streams: int

    @property
    def mount_notebook_dir(self) -> bool: ...

    @property
    def kernel_manager(self) -> Any: ...

    @property
    def terminal_manager(self) -> Any: ...
