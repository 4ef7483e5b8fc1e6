"""The client of a shared jupyter-cluster service (team mode).

When ``c.ClusterManager.service_url`` is set (under JupyterHub it defaults from
``JUPYTER_CLUSTER_SERVICE_URL``), every front end of a user's server (the CLI,
the notebook API and ``%cluster``, the launch form, the kernel provisioner, the
REST routes behind the Lab extension) uses :class:`.remote_engine.RemoteEngine` instead
of a :class:`~jupyter_cluster.engine.manager.ClusterManager` of its own: the
service owns the agents and the store, and this process holds no Docker
credential. What runs inside the containers (the kernel, terminals, ``exec``)
goes over SSH with the session's key, which the service hands to the session's
owner only (:mod:`.shell`).
"""
