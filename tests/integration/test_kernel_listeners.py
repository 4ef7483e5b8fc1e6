"""Another user of this machine hears nothing of a single-user cluster kernel (X2).

A ZMQ subscriber needs no key to read a kernel's IOPub: any local user who can
connect to its port reads the code and output of its owner. Here another Unix
user (``nobody``, through ``setpriv``) runs the team tests' probe, which
subscribes to every TCP listener on this machine's loopback and every Unix socket
it can name, while a cluster kernel started with the default settings prints a
canary. Other kernels may run on this machine meanwhile (other tests, other
users): what counts is what the probe hears of this one, its canary and any
message answering this client (its session id is in their parent header). By
default kernel traffic goes over SSH to Unix sockets in a directory only
the kernel's owner can enter, and main1 publishes only its (key-authenticated) SSH
port: the probe hears nothing. The same probe against a kernel with
``kernel_transport = "direct"`` (main1's kernel ports published on loopback, the
default before) hears the canary: the probe is one that would catch the leak.
"""

from __future__ import annotations

import asyncio
import json
import pwd
import subprocess
import uuid
from pathlib import Path
from typing import Any

import pytest
from jupyter_client.manager import AsyncKernelManager

from tests.support.constants import BIN
from tests.support.kernels import run_cell, start_client

from .support import Workspace

#: serial: the probe subscribes to every kernel of the machine, and keeps its last frames.
pytestmark = [pytest.mark.docker, pytest.mark.serial]
PROBES = Path(__file__).parents[1] / "hub" / "probes.py"
#: Prints the canary for about 8 s: the probe rescans listeners every second.
CANARY_CELL = (
    "import time\nfor i in range(40):\n    print({canary!r}, i, flush=True)\n    time.sleep(0.2)"
)


def _probe(stop: Path) -> subprocess.Popen[str]:
    """The listening probe, as ``nobody`` (no group of root's, no capability)."""
    nobody = pwd.getpwnam("nobody")
    ids = (f"--reuid={nobody.pw_uid}", f"--regid={nobody.pw_gid}", "--clear-groups")
    return subprocess.Popen(
        ["setpriv", *ids, "--", str(BIN / "python3"), str(PROBES), "listen", str(stop)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd="/",
    )


async def _heard_while_printing(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch, canary: str
) -> tuple[AsyncKernelManager, Any, str]:
    """The kernel manager, what the probe heard, and the client's session id."""
    ws.install_kernelspec(monkeypatch, "scan", "--cpu", "0.5", "--mem", "512m")
    km = AsyncKernelManager(kernel_name="scan")
    kc = await start_client(km)
    client_session = kc.session.session
    # Where the probe (another user) can see it: not under root's private tmp dirs.
    stop = Path(f"/tmp/jc-probe-stop-{uuid.uuid4().hex}")
    probe = _probe(stop)
    out = err = ""
    try:
        await asyncio.sleep(2.5)  # the probe has scanned the listeners the kernel opened
        cell = await run_cell(kc, CANARY_CELL.format(canary=canary), timeout=60)
        assert canary in cell.stdout  # the kernel's owner hears it
    finally:
        stop.touch()
        try:
            out, err = await asyncio.to_thread(probe.communicate, timeout=60)
        finally:
            if probe.poll() is None:  # never left scanning for the next tests
                probe.kill()
                probe.wait()
            stop.unlink()
            kc.stop_channels()
            await km.shutdown_kernel(now=True)
    assert probe.returncode == 0, err
    return km, json.loads(out), client_session


@pytest.mark.parametrize("transport", ["default", "direct"])
async def test_another_local_user_hears_nothing_of_the_kernel_by_default(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch, transport: str
) -> None:
    if transport == "direct":
        ws.write_config("c.ClusterManager.kernel_transport = 'direct'\n")
    canary = f"canary-{uuid.uuid4().hex[:12]}"
    km, heard, client_session = await _heard_while_printing(ws, monkeypatch, canary)
    leaked = [f for f in heard["frames"] if canary in f]
    answers = [f for f in heard["frames"] if client_session in f]
    assert heard["tried"], heard  # it did subscribe to this machine's listeners
    if transport == "direct":
        assert km.transport == "tcp"
        assert leaked, "the probe should hear a kernel published on loopback"
        assert answers, "the probe should hear the messages answering this client"
    else:
        assert km.transport == "ipc", km.get_connection_info()
        assert leaked == [], leaked[:3]
        assert answers == [], answers[:3]
