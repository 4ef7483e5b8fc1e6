"""A kernel that dies under a connected client leaves main1's log readable.

The kernel's client (a notebook's, the server's websocket) keeps reconnecting its
ZMQ sockets to a dead kernel until the kernel manager gives it up or restarts it.
Through the SSH tunnel each reconnection was held and the kernel's socket in main1
asked for again every 20 ms, and sshd logged every refusal: a few seconds after a
crash, ``%cluster logs main1`` was hundreds of ``sshd: connect to … failed`` lines,
and every start added a dozen while the kernel imported.
Once the provisioner has seen the kernel end without being asked, the tunnel is
closed (a restart opens a new one): the client's reconnections then fail on this
machine, where the sockets' private directory stays (nobody else may take its name
while the client connects to paths in it). sshd's refusals of the kernel's sockets
(expected while a kernel starts) are left out of the log.
"""

from __future__ import annotations

import asyncio
import os
import pwd
import socket
import stat
import subprocess
import time

import pytest
from jupyter_client.manager import AsyncKernelManager

from tests.support.constants import BIN, SMALL_FLAGS
from tests.support.kernels import ok_cell, start_client

from .support import Workspace

pytestmark = pytest.mark.docker

#: Seconds the dead kernel's client is left reconnecting before the log is read.
LEFT_RECONNECTING = 4.0


def main1_log(ws: Workspace, session_id: str) -> list[str]:
    """main1's log as ``jupyter cluster logs`` shows it."""
    return ws.ok_cli("logs", session_id, "main1").stdout.splitlines()


def sshd_refusals(ws: Workspace, session_id: str) -> list[str]:
    """sshd's lines in main1's log about kernel sockets it could not connect to."""
    return [line for line in main1_log(ws, session_id) if line.startswith("sshd: connect to ")]


#: Run as ``nobody``: take the place of the kernel's first socket (its directory too,
#: if its name is free), and say so.
TAKE_SOCKET = (
    "import os, socket, sys\n"
    "path = sys.argv[1]\n"
    "os.makedirs(os.path.dirname(path), exist_ok=True)\n"
    "listener = socket.socket(socket.AF_UNIX)\n"
    "listener.bind(path)\n"
    "print('taken')\n"
)


def take_as_nobody(path: str) -> subprocess.CompletedProcess[str]:
    """Another Unix user of this machine tries to listen where ``path`` is."""
    nobody = pwd.getpwnam("nobody")
    ids = (f"--reuid={nobody.pw_uid}", f"--regid={nobody.pw_gid}", "--clear-groups")
    argv = ["setpriv", *ids, "--", str(BIN / "python3"), "-c", TAKE_SOCKET, path]
    return subprocess.run(argv, capture_output=True, text=True, timeout=30, cwd="/")


def connectable(path: str) -> bool:
    """Whether a Unix socket on this machine takes a connection at ``path``."""
    probe = socket.socket(socket.AF_UNIX)
    try:
        probe.connect(path)
        return True
    except OSError:
        return False
    finally:
        probe.close()


async def test_a_dead_kernels_client_does_not_flood_main1s_log(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = ws.install_kernelspec(monkeypatch, "itest-dies", *SMALL_FLAGS)
    km = AsyncKernelManager(kernel_name=name)  # no restarter: the kernel stays dead
    kc = await start_client(km)
    try:
        [session] = ws.json("ls")
        await ok_cell(kc, "print('alive')")
        info = km.get_connection_info()
        assert info["transport"] == "ipc", info  # through the SSH tunnel (the default)
        sockets = [f"{info['ip']}-{info['shell_port']}", f"{info['ip']}-{info['iopub_port']}"]
        assert all(connectable(path) for path in sockets)
        # the tunnel asked for the sockets while the kernel imported: none of it shows
        assert sshd_refusals(ws, session["id"]) == []
        before = len(main1_log(ws, session["id"]))
        kc.execute("import os; os._exit(3)")
        deadline = time.monotonic() + 30
        while await km.is_alive():  # the provisioner's poll: it sees the end
            assert time.monotonic() < deadline, "the kernel did not die"
            await asyncio.sleep(0.2)
        assert not any(connectable(path) for path in sockets)
        # The client still connects to those paths until the restart forwards them
        # again: their private directory stays, and nobody else can listen there.
        folder = os.stat(os.path.dirname(sockets[0]))
        assert folder.st_uid == os.getuid() and stat.S_IMODE(folder.st_mode) == 0o700
        taken = take_as_nobody(sockets[0])
        assert taken.returncode != 0 and "taken" not in taken.stdout, taken
        assert "Permission denied" in taken.stderr, taken.stderr
        await asyncio.sleep(LEFT_RECONNECTING)  # the client's channels keep trying
        assert sshd_refusals(ws, session["id"]) == []
        after = main1_log(ws, session["id"])[before:]  # the tunnel's goodbye, at most
        assert len(after) <= 4 and all(line.startswith("sshd: ") for line in after), after
    finally:
        kc.stop_channels()
        await km.shutdown_kernel(now=True)
    [ended] = ws.json("ls", "--all")
    assert ended["status"] == "TERMINATED", ended
    assert ws.docker_objects() == ([], [])
