"""A kernel whose command main1 cannot run fails to start, as a local kernel does;
one that dies at start says why.

A local kernel with a missing executable fails in ``start_kernel`` with the cause. A
cluster kernel used to "start" (the exec ran, its command did not) and then loop in
the restarter. Here both kernelspecs name a command that does not exist: both
starts fail at once with the cause, and the cluster session ends with nothing left.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import nbformat
import pytest
from jupyter_client.manager import AsyncKernelManager

from jupyter_cluster.errors import ClusterError
from jupyter_cluster.provisioning.kernel_death import INSTALL_IPYKERNEL
from tests.support.constants import IMAGE, JUPYTER, SMALL_FLAGS
from tests.support.images import build_variant
from tests.support.processes import run

from .support import Workspace

pytestmark = pytest.mark.docker

MISSING = "no-such-kernel-binary"


def kernel_json(kernels: Path, name: str) -> Path:
    return kernels / name / "kernel.json"


def break_argv(path: Path) -> None:
    """Make the kernelspec at ``path`` run a command that does not exist."""
    spec = json.loads(path.read_text())
    spec["argv"] = [MISSING, "-f", "{connection_file}"]
    path.write_text(json.dumps(spec))


async def test_a_missing_kernel_command_fails_the_start_and_leaves_nothing(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = ws.install_kernelspec(
        monkeypatch, "itest-broken", "--size", "2", "--cpu", "0.25", "--mem", "256m"
    )
    kernels = Path(ws.env["JUPYTER_PATH"]) / "kernels"
    break_argv(kernel_json(kernels, name))
    local = kernel_json(kernels, "broken-local")
    local.parent.mkdir(parents=True)
    local.write_text(json.dumps({"argv": [], "display_name": "local", "language": "python"}))
    break_argv(local)

    with pytest.raises(FileNotFoundError, match=MISSING):  # a local kernel: at once
        await AsyncKernelManager(kernel_name="broken-local").start_kernel()

    km = AsyncKernelManager(kernel_name=name)
    began = time.monotonic()
    with pytest.raises(ClusterError) as failed:
        await km.start_kernel()
    assert time.monotonic() - began < 60
    message = str(failed.value)
    assert f"{MISSING}: no such command in main1" in message, message
    assert "exit code 127" in message, message
    assert not km.has_kernel and km.provisioner is not None
    assert km.provisioner.session_id is None
    [session] = ws.json("ls", "--all")
    assert session["status"] == "TERMINATED", session
    assert ws.docker_objects() == ([], [])


#: The default image without ipykernel: python3 runs, ``-m ipykernel_launcher`` not.
NO_IPYKERNEL_IMAGE = "jupyter-cluster/test-no-ipykernel:latest"
NO_IPYKERNEL_DOCKERFILE = f"""FROM {IMAGE}
RUN rm -rf /usr/lib/python3/dist-packages/ipykernel*
"""


def test_a_kernel_dying_at_start_says_why_where_it_was_started(ws: Workspace) -> None:
    """A local kernel's start-up error goes to the terminal of whoever started it; a
    cluster kernel's goes to main1's log, so jupyter_client said only "Kernel died
    before replying to kernel_info". Its last output now comes with it, and is the
    reason its session ended."""
    build_variant(NO_IPYKERNEL_IMAGE, NO_IPYKERNEL_DOCKERFILE)
    prefix = ws.root / "prefix"
    ws.env["JUPYTER_PATH"] = str(prefix / "share" / "jupyter")
    flags = ("--image", NO_IPYKERNEL_IMAGE, *SMALL_FLAGS, "--prefix", str(prefix))
    ws.ok_cli("kernelspec", "install", "noipykernel", *flags)
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("print(1)")])
    nbformat.write(notebook, ws.root / "nb.ipynb")
    argv = [JUPYTER, "execute", "--kernel_name", "noipykernel", "nb.ipynb"]
    result = run(argv, env=ws.env, cwd=ws.root, timeout=300)
    assert result.returncode != 0, str(result)
    said = "the kernel exited with code 1; its last output in main1: "
    said += "/usr/bin/python3: No module named ipykernel_launcher; " + INSTALL_IPYKERNEL
    assert said in result.stderr, result.stderr
    assert result.stderr.index(said) < result.stderr.index("Kernel died before replying")
    [session] = ws.json("ls", "--all")
    assert (session["status"], session["status_reason"]) == ("TERMINATED", said), session
    log = ws.ok_cli("logs", session["id"]).stdout.splitlines()
    assert "sshd: Server listening on 0.0.0.0 port 2200." in log, log
    assert "jupyter-cluster: ready" in log, log
    # The kernel starts as soon as main1's log FIFO exists, so its start line may come
    # before sshd's and "ready" (one CI run), and sshd's lines (the kernel manager's
    # connections) anywhere: the kernel's own lines are those after its start line.
    marks = [i for i, line in enumerate(log) if line.startswith("jupyter-cluster: kernel ")]
    assert len(marks) == 1 and log[marks[0]].endswith(" starts"), log
    kernels = [line for line in log[marks[0] + 1 :] if not line.startswith(("sshd: ", "jupyter-"))]
    assert kernels[0] == "/usr/bin/python3: No module named ipykernel_launcher", log
    assert ws.docker_objects() == ([], [])
