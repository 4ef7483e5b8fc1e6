"""A real distributed job end to end (#25 item 5): MPI across a size-3 batch session.

The test image (``mpi_image``: the kernel image with Debian's Open MPI and mpi4py)
runs ``mpirun`` over the session's hostfile, one rank per container, started over
the session's SSH. The ranks allreduce their rank numbers and gather their host
names to rank 0, which prints both. The CLI that launched the job is SIGKILLed as
soon as a driver has the session: the job runs and ends anyway, ``wait`` exits 0,
the result and main1's log (with the collective's output) stay, and nothing of the
session is left in Docker (the ``ws`` fixture checks).
"""

from __future__ import annotations

import pytest

from tests.support.constants import LABEL_SESSION, SMALL_FLAGS
from tests.support.docker import docker
from tests.support.processes import alive
from tests.support.waiting import wait_for

from .support import Workspace

pytestmark = pytest.mark.docker

#: One rank per container: the hostfile lists main1, sub1, sub2 without ``slots=``
#: (Open MPI then counts the cores each container sees), so ``--map-by node``.
MPI_JOB = """mpirun -np 3 --map-by node --hostfile "$JUPYTER_CLUSTER_HOSTFILE" python3 -c '
import socket
from mpi4py import MPI
world = MPI.COMM_WORLD
total = world.allreduce(world.rank)
hosts = world.gather(socket.gethostname())
if world.rank == 0:
    print("allreduce sum of", world.size, "ranks:", total, "hosts:", *hosts)
'"""


def test_an_mpi_allreduce_across_3_containers_outlives_its_killed_cli(
    ws: Workspace, mpi_image: str
) -> None:
    found = ws.launch_then_kill_cli(
        "--size", "3", "--image", mpi_image, *SMALL_FLAGS, "--command", MPI_JOB
    )
    driver = ws.driver_pid(found.id)
    waited = ws.cli("wait", found.id, timeout=300)
    logs = ws.cli("logs", found.id, "main1").stdout
    assert waited.returncode == 0, f"{waited}\n--- main1's log\n{logs}"
    done = ws.show(found.id)
    assert (done["status"], done["status_reason"]) == ("TERMINATED", "batch job succeeded"), done
    job = done["job"]
    assert (job["state"], job["exit_code"], len(job["tries"])) == ("succeeded", 0, 1), job
    assert "allreduce sum of 3 ranks: 3 hosts: main1 sub1 sub2" in logs, logs
    assert "jupyter-cluster: batch job try 1 exited with code 0" in logs, logs

    wait_for(lambda: not alive(driver), 30, "the driver to exit with its session")
    session_label = f"label={LABEL_SESSION}={found.id}"
    containers = docker("ps", "-aq", "--filter", session_label).stdout.split()
    networks = docker("network", "ls", "-q", "--filter", session_label).stdout.split()
    assert (containers, networks) == ([], []), "the ended session left Docker objects"
