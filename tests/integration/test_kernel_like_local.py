"""A cluster kernel starts in main1 as ``ipykernel install`` and jupyter_client start a
local one (core/kernel_command.py): CPython's frozen modules off, so the debugger
sees the standard library and debugpy writes no warning into main1's log, and
launched by a manager, so ipykernel writes no note for a terminal there (Ctrl-C,
``--existing`` with a path inside main1). JupyterLab's debugger works in it: a
breakpoint in a cell stops the kernel there (its requests sent as JupyterLab sends
them; tests/browser/lab_e2e.js switches it on in the Lab).
"""

from __future__ import annotations

import pwd
import subprocess
from typing import Any

import pytest
from jupyter_client.manager import AsyncKernelManager

from jupyter_cluster.core.naming import SSH_PORT
from tests.support.constants import BIN, SMALL_FLAGS
from tests.support.debugger import stops_at_a_breakpoint
from tests.support.kernels import json_of, start_client

from .support import Workspace

pytestmark = pytest.mark.docker

#: What main1's log had at every kernel start before (debugpy's, then ipykernel's).
NOISE = ("Debugger warning", "frozen modules", "Ctrl-C will not work", "--existing")


#: Run as ``nobody`` on this host: connect to each ADDRESS:PORT given; print the ones
#: that answered.
CONNECT = (
    "import socket, sys\n"
    "for target in sys.argv[1:]:\n"
    "    host, port = target.rsplit(':', 1)\n"
    "    try:\n"
    "        socket.create_connection((host, int(port)), timeout=2).close()\n"
    "        print('answered', target)\n"
    "    except OSError:\n"
    "        pass\n"
)


def tcp_listeners(container_id: str) -> list[tuple[str, int]]:
    """The (address in hex, port) of every TCP socket listening in the container's
    network namespace (its /proc/net/tcp and tcp6, read as root)."""
    done = subprocess.run(
        ["docker", "exec", container_id, "cat", "/proc/net/tcp", "/proc/net/tcp6"],
        capture_output=True,
        text=True,
        check=True,
    )
    found = []
    for line in done.stdout.splitlines():
        fields = line.split()
        if len(fields) > 3 and fields[3] == "0A":  # LISTEN
            address, port = fields[1].split(":")
            found.append((address, int(port, 16)))
    return found


def loopback(address: str) -> bool:
    """Whether a /proc/net/tcp{,6} address (hex) is 127.0.0.0/8 or ::1 (or v4-mapped)."""
    if len(address) == 8:  # IPv4, little-endian
        return address.endswith("7F")
    return address in ("00000000000000000000000001000000", "0000000000000000FFFF00000100007F")


async def the_debugger_listens_on_main1s_loopback_only(container_id: str) -> None:
    """While the debugger runs: every listener in main1 but sshd (published, key-only)
    is on its loopback, and another Unix user of this host (``nobody``) reaches none
    of them at main1's address."""
    listeners = tcp_listeners(container_id)
    assert len(listeners) > 1, listeners  # sshd, and the debugger's at least
    ports = {port for address, port in listeners if port != SSH_PORT}
    assert ports and all(loopback(a) for a, port in listeners if port != SSH_PORT), listeners
    inspected = subprocess.run(
        [
            "docker",
            "inspect",
            "-f",
            "{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}",
            container_id,
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    nobody = pwd.getpwnam("nobody")
    ids = (f"--reuid={nobody.pw_uid}", f"--regid={nobody.pw_gid}", "--clear-groups")
    targets = [f"{inspected}:{port}" for port in sorted(ports)]
    argv = ["setpriv", *ids, "--", str(BIN / "python3"), "-c", CONNECT, *targets]
    tried = subprocess.run(argv, capture_output=True, text=True, timeout=60, cwd="/")
    assert tried.returncode == 0 and tried.stdout == "", tried


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
        provisioner: Any = km.provisioner
        session = await provisioner.engine.get(provisioner.session_id)
        main1 = session.containers[0].container_id or ""
        # JupyterLab's debugger: a breakpoint in a cell stops the kernel in main1 there;
        # what it listens on meanwhile is main1's own loopback.
        await stops_at_a_breakpoint(kc, lambda: the_debugger_listens_on_main1s_loopback_only(main1))
        log = main1_log(main1)
        assert "jupyter-cluster: kernel" in log, log  # the kernel's start is in it
        assert not [n for n in NOISE if n in log], log
    finally:
        kc.stop_channels()
        await km.shutdown_kernel(now=True)
