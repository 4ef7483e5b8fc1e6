"""jupyter-cluster: Backend.AI-style cluster compute sessions for Jupyter.

A cluster session is N containers (``main1``, ``sub1`` …) with identical
resources on one or more Docker agents, joined by a private network, with SSH
between them and the ``BACKENDAI_CLUSTER_*`` environment. Front ends call the
engine through the :class:`jupyter_cluster.engine.api.Engine` protocol:
:class:`jupyter_cluster.engine.manager.ClusterManager`, or in team mode the shared
service's client (:func:`jupyter_cluster.config.make_engine` picks one).
"""

import os
from typing import Any

__version__ = "0.1.0"


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext jupyter_cluster``: the ``%cluster`` magic.

    In a cluster container (``BACKENDAI_CLUSTER_HOST`` set) it acts on the session
    the kernel runs in; elsewhere it talks to the engine in this process.
    """
    if os.environ.get("BACKENDAI_CLUSTER_HOST"):
        from .runtime import incluster as magic
    else:
        from . import magics as magic  # type: ignore[no-redef]
    magic.load_ipython_extension(ipython)


def __getattr__(name: str) -> Any:
    """``from jupyter_cluster import ClusterSession`` without importing it eagerly."""
    if name == "ClusterSession":
        from .session import ClusterSession

        return ClusterSession
    raise AttributeError(name)


def _jupyter_labextension_paths() -> list[dict[str, str]]:
    """The built JupyterLab extension (for ``jupyter labextension develop``)."""
    return [{"src": "labextension", "dest": "jupyter-cluster"}]


def _jupyter_server_extension_points() -> list[dict[str, object]]:
    """The Jupyter server extension (REST API under ``cluster/api/``): :mod:`.server.app`."""
    from .server.app import ClusterApp

    return [{"module": "jupyter_cluster.server.app", "app": ClusterApp}]
