"""The site's choice of queue order: ``c.ClusterManager.queue_order``.

A mixin of :class:`~jupyter_cluster.engine.manager.ClusterManager`; the launcher
reads it for each pass of the scheduling loop (:mod:`.queue_loop`), and the
orders themselves are :mod:`jupyter_cluster.core.queue_order`.
"""

from __future__ import annotations

from traitlets import Enum
from traitlets.config import LoggingConfigurable

from ..core.queue_order import ORDERS


class QueueSettings(LoggingConfigurable):
    """How the waiting queue of each resource group is ordered."""

    queue_order = Enum(
        list(ORDERS),
        "fifo",
        config=True,
        help="The order waiting sessions of a resource group are placed in: 'fifo' "
        "(first in, first out), 'priority' (a launch's priority, higher first; first in, "
        "first out among equals) or 'fair-share' (dominant-resource fair share across "
        "owners: the owner holding the smaller share of the group's CPU, memory or GPU "
        "goes first; first in, first out among equals). pending_backfill still lets a "
        "later session that fits start before earlier ones that do not.",
    )
