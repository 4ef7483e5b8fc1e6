"""A kernel whose command main1 cannot run fails to start, as a local kernel does.

A local kernel with a missing executable fails in ``start_kernel`` with the cause. A
cluster kernel used to "start" (the exec ran, its command did not) and then loop in
the restarter. Here both kernelspecs name a command that does not exist: both
starts fail at once with the cause, and the cluster session ends with nothing left.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from jupyter_client.manager import AsyncKernelManager

from jupyter_cluster.errors import ClusterError

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
