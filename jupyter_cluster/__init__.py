"""jupyter-cluster: Backend.AI-style cluster compute sessions for Jupyter.

A cluster session is N containers (``main1``, ``sub1`` …) with identical
resources on one or more Docker agents, joined by a private network, with SSH
between them and the ``BACKENDAI_CLUSTER_*`` environment. The engine is
:class:`jupyter_cluster.manager.ClusterManager`; front ends call it.
"""

__version__ = "0.1.0"
