"""The Jupyter server extension: REST API under ``cluster/api/``, events, terminals.

:class:`ClusterApp` is the ``ExtensionApp`` (enabled by the installed
``jupyter_server_config.d`` file); :mod:`.service` is what its handlers share;
:mod:`.handlers` holds the REST handlers, one module per topic.
"""

from .app import ClusterApp

__all__ = ["ClusterApp"]
