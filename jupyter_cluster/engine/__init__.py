"""The engine: :class:`~jupyter_cluster.engine.manager.ClusterManager` and its IO edges.

The manager launches, lists, inspects, reads logs of, runs commands in and
terminates sessions; its edges are the agents (Docker engines, ``agents/``), the
SQLite store, the data folders and SSH key generation. Every front end (CLI,
server extension, provisioner, notebook API) calls it; it imports none of them.
Nothing is re-exported here, so importing one edge (e.g. ``engine.agents.base``)
does not pull in the whole engine.
"""
