"""Names every benchmark shares: the kernel image, the kernel's and sshd's ports in a
container, and the Docker labels that mark what a run made.

Used by the entry scripts and by :mod:`common.floors`, :mod:`common.agents`,
:mod:`common.sandbox` and :mod:`common.kernels`. The label strings are written out
rather than imported from jupyter_cluster, as the tests do: the benchmark checks
with the ``docker`` command line what the engine left.
"""

from __future__ import annotations

#: The default kernel image (``jupyter cluster image build`` builds it).
IMAGE = "jupyter-cluster/kernel:latest"
#: A floor kernel's ports inside its container, and their connection-file names.
KERNEL_PORTS = (50001, 50002, 50003, 50004, 50005)  # shell, iopub, stdin, control, hb
PORT_NAMES = ("shell_port", "iopub_port", "stdin_port", "control_port", "hb_port")
#: The port sshd listens on in a cluster container (and in the floors' containers).
SSH_PORT = 2200
#: The label on every Docker object a floor makes (value: the run's id).
BENCH_LABEL = "jupyter-cluster-bench.run-id"
#: The labels the engine puts on a session's containers and networks.
MANAGER_LABEL = "jupyter-cluster.manager-id"
SESSION_LABEL = "jupyter-cluster.session-id"
