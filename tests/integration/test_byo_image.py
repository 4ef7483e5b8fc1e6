"""Bring your own image (issue #2, item 5): python3, ipykernel and OpenSSH suffice.

The image here is the default one with the user ``work`` deleted and nothing of
jupyter-cluster in it: the engine must put in everything else at creation (the
start-up script adds ``work``), and SSH, the environment and the hostfile must
work exactly as with the default image. Its sshd privilege-separation folder is
writable by all, which sshd refuses to start with: the engine's files set it right.
An image whose own user holds work's uid (Jupyter's images: jovyan, 1000) keeps that
user; work becomes the uid's first name, so ``ssh subN`` finds work's configuration.
"""

from __future__ import annotations

import pytest

from jupyter_cluster.core import naming
from tests.support.constants import IMAGE, SMALL_FLAGS
from tests.support.docker import docker
from tests.support.images import build_variant

from .support import Workspace

pytestmark = pytest.mark.docker

BYO_IMAGE = "jupyter-cluster/test-byo:latest"
DOCKERFILE = f"""FROM {IMAGE}
RUN userdel --remove work && rm -rf /home/config && ! id work
RUN mkdir -p /run/sshd && chmod 0777 /run/sshd
USER root
WORKDIR /
"""


@pytest.fixture(scope="module")
def byo_image() -> str:
    """An image without user ``work``, /home/work or /home/config, with a /run/sshd
    that sshd would not start with."""
    build_variant(BYO_IMAGE, DOCKERFILE)
    return BYO_IMAGE


def test_an_image_without_user_work_gets_a_full_cluster(ws: Workspace, byo_image: str) -> None:
    assert docker("run", "--rm", byo_image, "sh", "-c", "id work", check=False).returncode != 0
    session = ws.launch("--image", byo_image, "--size", "2", *SMALL_FLAGS, "--bootstrap", "id -un")
    sid = session["id"]
    assert session["status"] == "RUNNING", session
    assert ws.sh(sid, "main1", "id -u; id -un; pwd").split() == ["1000", "work", "/home/work"]
    assert ws.sh(sid, "main1", "ssh sub1 hostname").strip() == "sub1"
    assert ws.sh(sid, "sub1", "ssh main1 'echo $BACKENDAI_CLUSTER_ROLE'").strip() == "main"
    assert ws.sh(sid, "sub1", "cat /home/config/hostfile").split() == ["main1", "sub1"]
    for host in ("main1", "sub1"):
        paths = f"/run/sshd /home/work {naming.RUN_DIR} {naming.LOG_FIFO}"
        modes = ws.sh(sid, host, f"stat -c '%U %a' {paths}").splitlines()
        assert modes == ["root 755", "work 755", "work 755", "work 600"], (host, modes)
    log = ws.ok_cli("logs", sid, "sub1").stdout
    assert "work\n" in log  # the bootstrap ran as work
    ws.ok_cli("rm", sid)


#: Jupyter's images (jupyter/docker-stacks) run as jovyan, uid 1000, group users,
#: and their conda in /opt/conda belongs to that uid.
JOVYAN_IMAGE = "jupyter-cluster/test-jovyan:latest"
JOVYAN_DOCKERFILE = f"""FROM {IMAGE}
RUN userdel --remove work \\
 && useradd --uid 1000 --gid 100 --create-home --home-dir /home/jovyan jovyan \\
 && mkdir -p /opt/conda && chown 1000:100 /opt/conda
"""


def test_an_image_whose_user_has_works_uid_shares_it_with_work(ws: Workspace) -> None:
    build_variant(JOVYAN_IMAGE, JOVYAN_DOCKERFILE)
    flags = ("--image", JOVYAN_IMAGE, "--size", "2", *SMALL_FLAGS, "--name", "jovyan")
    session = ws.launch(*flags, "--bootstrap", "id -un > /home/work/at-bootstrap")
    assert session["status"] == "RUNNING", session
    for host in ("main1", "sub1"):
        said = ws.sh("jovyan", host, "id -u; id -un; cat at-bootstrap; stat -c %U /opt/conda")
        assert said.split() == ["1000", "work", "work", "work"], (host, said)
        # the image's user is still there, and what it owns is work's to change
        assert ws.sh("jovyan", host, "id -u jovyan; touch /opt/conda/x && echo ok").split() == [
            "1000",
            "ok",
        ]
    # ssh reads the config of the uid's first name's home: work's
    assert ws.sh("jovyan", "main1", "ssh sub1 'hostname; id -un'").split() == ["sub1", "work"]
    ws.ok_cli("rm", "jovyan")
