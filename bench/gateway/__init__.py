"""The peer of ``bench_gateway.py``: gateway_provisioners' ``DockerProvisioner``.

gateway_provisioners is not a dependency of the project; it runs from an environment
of its own (``--gateway-python``). :mod:`gateway.peer` (imported by
``bench_gateway.py``, in the project's Python) finds that environment, builds its
kernel image, installs its kernelspec and drives :mod:`gateway.worker`; ``worker.py``
and ``launch.py`` run as scripts in gateway_provisioners' Python and import nothing
from ``bench/``.
"""
