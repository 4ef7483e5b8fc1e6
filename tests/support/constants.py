"""Constants of every test tier: the kernel image, Docker labels, the API, small sessions, paths.

The label strings are written out here rather than imported from jupyter_cluster:
the ``docker`` command line is an independent witness of what the code did, so the
tests must not learn the labels from the code they check.
"""

from __future__ import annotations

import sys
from pathlib import Path

#: The repository's root directory (the one holding ``tests/`` and ``examples/``).
REPO = Path(__file__).resolve().parents[2]
#: The example notebooks (and example images) shipped with the project.
EXAMPLES = REPO / "examples"
#: The directory of this Python's scripts (``jupyter``, ``jlpm``, …).
BIN = Path(sys.executable).parent
#: ``jupyter`` of this Python.
JUPYTER = str(BIN / "jupyter")
#: ``jupyter cluster`` as a subprocess of this Python.
CLI = (sys.executable, "-m", "jupyter_cluster.cli")

#: The default kernel image (``jupyter cluster image build`` builds it).
IMAGE = "jupyter-cluster/kernel:latest"
#: Labels the engine puts on every container and network it creates.
LABEL_MANAGER = "jupyter-cluster.manager-id"
LABEL_SESSION = "jupyter-cluster.session-id"
#: Labels the engine puts on every container.
LABEL_HOST = "jupyter-cluster.host"
LABEL_ROLE = "jupyter-cluster.role"
LABEL_KERNEL = "jupyter-cluster.kernel-id"
#: The line a container's start-up script logs once it is ready.
READY = "jupyter-cluster: ready"
#: Where the extension's REST API lives under a Jupyter server's base URL.
API = "cluster/api"

#: Small sessions (the whole suite must run in a few minutes on 2 cores): CLI flags …
SMALL_FLAGS = ("--cpu", "0.25", "--mem", "256m")
#: … and the same as a REST launch body.
SMALL_BODY = {"cpu": 0.25, "mem": "256m"}
#: A size-3 session of half a CPU per container, as CLI flags.
SIZE3_FLAGS = ("--size", "3", "--cpu", "0.5", "--mem", "256m")
#: The hosts of a size-3 session, in order.
HOSTS = ["main1", "sub1", "sub2"]

#: What a kernel start may take on a busy 2-core machine (a cluster launch is ~3 s).
START_TIMEOUT = 120

MIB = 1024**2
GIB = 1024**3
