"""A Horovod job across a size-3 session, as the README shows it.

The README's steps as written there, its ``hvd_allreduce.py`` included. The test
image (``horovod_image``: the torch image with Open MPI and Horovod built from its
source release) runs ``horovodrun`` in main1, which checks each host over the
session's SSH and starts one process per container through ``mpirun``; they
``allreduce`` a tensor and ``allgather`` their host names over MPI across the
session's network.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.images import HOROVOD
from tests.support.readme import assert_readme_has, readme_block

from .support import Workspace

pytestmark = pytest.mark.docker

#: The README's command line, as written there, run in main1.
RUN = (
    "horovodrun -np $BACKENDAI_CLUSTER_SIZE \\\n"
    '    -H $(echo $BACKENDAI_CLUSTER_HOSTS | sed "s/,/:1,/g"):1'
    " python3 code/hvd_allreduce.py"
)


def test_horovodrun_in_main1_runs_a_process_in_each_of_3_containers(
    ws: Workspace, horovod_image: str, tmp_path: Path
) -> None:
    assert_readme_has(  # the README's steps, which this test runs
        (
            "jupyter cluster folder create code\n"
            "jupyter cluster folder cp hvd_allreduce.py code:\n",
            f"--image {horovod_image} --cpu 0.5 --mem 1g \\\n    --mount code --name hvd\n",
            f"jupyter cluster exec hvd main1 -- sh -c '{RUN}'\n",
            # how the image is built: what the horovod_image fixture does
            f"--no-binary :all: {HOROVOD} -d tests/images/horovod/sdists\n"
            "docker build -t jupyter-cluster/horovod-test:latest tests/images/horovod\n",
        )
    )
    script = tmp_path / "hvd_allreduce.py"
    script.write_text(readme_block("python", "# hvd_allreduce.py"))
    ws.ok_cli("folder", "create", "code")
    ws.ok_cli("folder", "cp", str(script), "code:")
    session = ws.launch(
        "--size", "3", "--image", horovod_image, "--cpu", "0.5", "--mem", "1g",
        "--mount", "code", "--name", "hvd",
    )  # fmt: skip
    ran = ws.cli("exec", "hvd", "main1", "--", "sh", "-c", RUN, timeout=180)
    assert ran.returncode == 0, str(ran)
    said = sorted(line for line in ran.stdout.splitlines() if "<stdout>:rank" in line)
    assert said == [
        f"[1,{rank}]<stdout>:rank {rank} of 3: sum 6, hosts main1 sub1 sub2" for rank in range(3)
    ], ran.stdout
    ws.ok_cli("rm", session["id"])
