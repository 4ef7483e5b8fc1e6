"""The pure domain of cluster sessions: units, states, resources, models, names,
placement, the launch form and its policy.

Everything here imports only the standard library and :mod:`jupyter_cluster.errors`
(a unit test checks it), so it is tested without Docker and shared by every layer.
"""
