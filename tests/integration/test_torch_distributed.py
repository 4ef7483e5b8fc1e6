"""torch.distributed across a size-3 session, as the README shows it.

The README's steps as written there, its ``allreduce.py`` included. The test image
(``torch_image``: the kernel image with Debian's PyTorch, CPU only) runs one process
per container, started in all three at once by ``exec --all``, the script read from
a data folder mounted in each. The processes meet at main1
(``env://`` rendezvous from ``BACKENDAI_CLUSTER_*``), ``all_reduce`` a tensor over
gloo across the session's network and ``all_gather`` their host names.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.readme import assert_readme_has, readme_block

from .support import Workspace

pytestmark = pytest.mark.docker

#: The README's command line, as written there, run in every container.
RUN = (
    "MASTER_ADDR=main1 MASTER_PORT=29500 \\\n"
    "    RANK=$BACKENDAI_CLUSTER_LOCAL_RANK WORLD_SIZE=$BACKENDAI_CLUSTER_SIZE"
    " python3 code/allreduce.py"
)


def test_a_gloo_all_reduce_across_3_containers(
    ws: Workspace, torch_image: str, tmp_path: Path
) -> None:
    assert_readme_has(  # the README's steps, which this test runs
        (
            "jupyter cluster folder create code\njupyter cluster folder cp allreduce.py code:\n",
            f"--image {torch_image} --cpu 0.5 --mem 1g \\\n    --mount code --name dist\n",
            f"jupyter cluster exec --all dist -- sh -c '{RUN}'\n",
        )
    )
    script = tmp_path / "allreduce.py"
    script.write_text(readme_block("python", "# allreduce.py"))
    ws.ok_cli("folder", "create", "code")
    ws.ok_cli("folder", "cp", str(script), "code:")
    session = ws.launch(
        "--size", "3", "--image", torch_image, "--cpu", "0.5", "--mem", "1g",
        "--mount", "code", "--name", "dist",
    )  # fmt: skip
    ran = ws.cli("exec", "--all", "dist", "--", "sh", "-c", RUN, timeout=120)
    assert ran.returncode == 0, str(ran)
    said = {}
    for line in ran.stdout.splitlines():
        host, _, text = line.partition(":")
        if "rank" in text:
            said[host] = text.strip()
    assert said == {
        host: f"rank {rank} of 3: sum 6, hosts main1 sub1 sub2"
        for rank, host in enumerate(("main1", "sub1", "sub2"))
    }, ran.stdout
    ws.ok_cli("rm", session["id"])
