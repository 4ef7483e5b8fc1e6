"""An image's own environment (``ENV`` in its Dockerfile) holds everywhere in a session.

Images that keep Python and their tools out of /usr/bin (conda's /opt/conda/bin,
CUDA's /usr/local/cuda/bin and its LD_LIBRARY_PATH) say so in their environment.
The image here moves python3 to /opt/conda/bin, which only its ``PATH`` names, and
sets ``LD_LIBRARY_PATH``, a locale, a ``HOME`` of another user and a value a shell or an env
file could mangle. The kernel, ``exec``, ``ssh subN CMD`` (what mpirun runs), login
shells (terminals, an interactive ``ssh``) and a warm set's containers must all find
python3 there and see the image's variables, under the session's own (``HOME``,
``BACKENDAI_*``), which still win. Before, the engine set a PATH of its own over the
image's and SSH sessions saw none of the image's variables: ``python3: not found``.
"""

from __future__ import annotations

import pytest

from tests.support.constants import IMAGE, SMALL_FLAGS
from tests.support.docker import docker
from tests.support.images import build_variant
from tests.support.kernels import kernel_running, ok_cell

from .support import Workspace
from .test_warm_pool import SHAPE, run

pytestmark = pytest.mark.docker

CONDA_LIKE = "jupyter-cluster/test-conda-like:latest"
PYTHON = "/opt/conda/bin/python3"
NOTE = "a 'quoted' $value = x"
DOCKERFILE = f"""FROM {IMAGE}
RUN mkdir -p /opt/conda/bin /opt/conda/lib \\
 && mv /usr/bin/python3.11 /opt/conda/bin/python3.11 \\
 && ln -s python3.11 /opt/conda/bin/python3 && rm -f /usr/bin/python3 \\
 && ! command -v python3
ENV PATH=/opt/conda/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \\
    LD_LIBRARY_PATH=/opt/conda/lib \\
    HOME=/home/jovyan \\
    TERM=dumb \\
    LANG=ja_JP.UTF-8 \\
    IMAGE_NOTE="a 'quoted' \\$value = x"
"""
#: What each way in prints: python3's path, the library path, the note, the image's
#: locale, HOME, host.
PROBE = (
    'command -v python3; echo "$LD_LIBRARY_PATH|$IMAGE_NOTE|$LANG|$HOME|$BACKENDAI_CLUSTER_HOST"'
)


def expected(host: str) -> str:
    return f"{PYTHON}\n/opt/conda/lib|{NOTE}|ja_JP.UTF-8|/home/work|{host}\n"


@pytest.fixture(scope="module")
def conda_like() -> str:
    """An image whose python3 only its ENV PATH finds."""
    build_variant(CONDA_LIKE, DOCKERFILE)
    found = docker("run", "--rm", CONDA_LIKE, "sh", "-c", "command -v python3", check=False)
    assert found.stdout.strip() == PYTHON
    return CONDA_LIKE


def test_exec_ssh_and_login_shells_have_the_images_environment(
    ws: Workspace, conda_like: str
) -> None:
    ws.launch("--image", conda_like, "--size", "2", *SMALL_FLAGS, "--name", "conda")
    for host in ("main1", "sub1"):
        assert ws.sh("conda", host, PROBE) == expected(host), host
        # a login shell: /etc/profile resets PATH; the container's comes back first
        login = ws.exec("conda", host, "bash", "-lc", "command -v python3; echo $PATH")
        assert login.returncode == 0, str(login)
        python, path = login.stdout.splitlines()
        assert python == PYTHON and path.startswith("/opt/conda/bin:"), login.stdout
    # ssh runs the command with sshd's environment and ~/.ssh/environment: mpirun's way
    assert ws.sh("conda", "main1", f"ssh sub1 '{PROBE}'") == expected("sub1")
    assert ws.sh("conda", "sub1", f"ssh main1 '{PROBE}'") == expected("main1")
    login = ws.sh("conda", "main1", "ssh sub1 bash -lc 'command\\ -v\\ python3'")
    assert login == f"{PYTHON}\n"
    # a terminal's type is the SSH client's, not the image's
    terminal = ws.sh("conda", "main1", "TERM=xterm-256color ssh -tt sub1 'echo $TERM'")
    assert terminal.strip() == "xterm-256color"
    mode = ws.sh("conda", "sub1", "stat -L -c '%a %U' ~/.ssh/environment")
    assert mode == "600 work\n"  # launch variables may be secrets
    ws.ok_cli("rm", "conda")


async def test_a_kernel_runs_on_the_images_python(
    ws: Workspace, conda_like: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = ws.install_kernelspec(monkeypatch, "itest-conda", "--image", conda_like, *SMALL_FLAGS)
    async with kernel_running(name) as kc:
        cell = await ok_cell(kc, "import sys, os; print(sys.executable, os.environ['HOME'])")
    assert cell.stdout == f"{PYTHON} /home/work\n"


async def test_a_warm_set_of_the_image_has_its_environment(ws: Workspace, conda_like: str) -> None:
    shape = {**SHAPE, "image": conda_like}
    manager = ws.manager(warm_pool=[shape])
    try:
        await manager.start()
        assert await manager.warm.fill() == 1
        spec = manager.make_spec(image=conda_like, size=2, cpu=0.25, mem="256m")
        session = await manager.launch(spec)
        assert session.network.startswith("jc-warm-")  # it did take the warm set
        assert await run(manager, session, "main1", f"ssh sub1 '{PROBE}'") + "\n" == expected(
            "sub1"
        )
        await manager.terminate(session.id)
        await manager.warm.drain()
    finally:
        await manager.close()
