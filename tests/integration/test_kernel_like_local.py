"""A cluster kernel starts in main1 as ``ipykernel install`` and jupyter_client start a
local one (core/kernel_command.py): CPython's frozen modules off, so the debugger
sees the standard library and debugpy writes no warning into main1's log, and
launched by a manager, so ipykernel writes no note for a terminal there (Ctrl-C,
``--existing`` with a path inside main1). JupyterLab's debugger works in it: a
breakpoint in a cell stops the kernel there (its requests sent as JupyterLab sends
them; tests/browser/lab_e2e.js switches it on in the Lab).
"""

from __future__ import annotations

import subprocess
from typing import Any

import pytest
from jupyter_client.manager import AsyncKernelManager

from tests.support.constants import SMALL_FLAGS
from tests.support.debugger import stops_at_a_breakpoint
from tests.support.kernels import json_of, start_client

from .support import Workspace

pytestmark = pytest.mark.docker

#: What main1's log had at every kernel start before (debugpy's, then ipykernel's).
NOISE = ("Debugger warning", "frozen modules", "Ctrl-C will not work", "--existing")


def main1_log(container_id: str) -> str:
    """main1's whole log (the kernel's output goes there)."""
    done = subprocess.run(
        ["docker", "logs", container_id], capture_output=True, text=True, check=True
    )
    return done.stdout + done.stderr


async def test_a_cluster_kernel_starts_as_a_local_one_and_its_debugger_stops_in_a_cell(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = ws.install_kernelspec(monkeypatch, "itest-local", *SMALL_FLAGS)
    km = AsyncKernelManager(kernel_name=name)
    kc = await start_client(km)
    try:
        assert await json_of(kc, "__import__('sys')._xoptions.get('frozen_modules')") == "off"
        assert await json_of(kc, "os.environ.get('JPY_PARENT_PID')") == "1"
        # JupyterLab's debugger: a breakpoint in a cell stops the kernel in main1 there.
        await stops_at_a_breakpoint(kc)
        provisioner: Any = km.provisioner
        session = await provisioner.engine.get(provisioner.session_id)
        log = main1_log(session.containers[0].container_id or "")
        assert "jupyter-cluster: kernel" in log, log  # the kernel's start is in it
        assert not [n for n in NOISE if n in log], log
    finally:
        kc.stop_channels()
        await km.shutdown_kernel(now=True)
