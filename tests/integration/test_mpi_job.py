"""A real distributed job end to end (#25 item 5): MPI across a size-3 batch session.

The README's MPI job, its launch taken word for word from there, on the test image
(``mpi_image``: the kernel image with Debian's Open MPI and mpi4py): it
runs ``mpirun`` over the session's hostfile, one rank per container, started over
the session's SSH. The ranks allreduce their rank numbers and gather their host
names to rank 0, which prints both. The CLI that launched the job is SIGKILLed as
soon as a driver has the session: the job runs and ends anyway, ``wait`` exits 0,
the result and main1's log (with the collective's output) stay, and nothing of the
session is left in Docker (the ``ws`` fixture checks).
"""

from __future__ import annotations

import shlex

import pytest

from tests.support.constants import LABEL_SESSION
from tests.support.docker import docker
from tests.support.processes import alive
from tests.support.readme import readme_block
from tests.support.waiting import wait_for

from .support import Workspace

pytestmark = pytest.mark.docker

#: The README's MPI job ("An MPI job"): its launch line, and the line it promises.
README_LAUNCH = "jupyter cluster launch --size 3 --image jupyter-cluster/mpi-test:latest"
PROMISED = "# allreduce sum of 3 ranks: 3 hosts: main1 sub1 sub2"


def readme_launch() -> list[str]:
    """The README's launch of the MPI job, as the shell splits it (its --command is one
    quoted word over several lines); the flags after ``jupyter cluster launch``."""
    block = readme_block("sh", README_LAUNCH + " --cpu 0.25 --mem 256m --command '")
    launch, _, rest = block.partition("\njupyter cluster wait SESSION")
    assert rest.splitlines()[1] == PROMISED, block
    words = shlex.split(launch)
    assert words[:3] == ["jupyter", "cluster", "launch"], words
    return words[3:]


def test_an_mpi_allreduce_across_3_containers_outlives_its_killed_cli(
    ws: Workspace, mpi_image: str
) -> None:
    flags = readme_launch()  # the image is the one the fixture built
    assert flags[flags.index("--image") + 1] == mpi_image
    found = ws.launch_then_kill_cli(*flags)
    driver = ws.driver_pid(found.id)
    waited = ws.cli("wait", found.id, timeout=300)
    logs = ws.cli("logs", found.id, "main1").stdout
    assert waited.returncode == 0, f"{waited}\n--- main1's log\n{logs}"
    done = ws.show(found.id)
    assert (done["status"], done["status_reason"]) == ("TERMINATED", "batch job succeeded"), done
    job = done["job"]
    assert (job["state"], job["exit_code"], len(job["tries"])) == ("succeeded", 0, 1), job
    assert PROMISED.removeprefix("# ") in logs.splitlines(), logs
    assert "jupyter-cluster: batch job try 1 exited with code 0" in logs, logs

    wait_for(lambda: not alive(driver), 30, "the driver to exit with its session")
    session_label = f"label={LABEL_SESSION}={found.id}"
    containers = docker("ps", "-aq", "--filter", session_label).stdout.split()
    networks = docker("network", "ls", "-q", "--filter", session_label).stdout.split()
    assert (containers, networks) == ([], []), "the ended session left Docker objects"
