"""Another user of the agent host cannot connect to listeners in session containers.

Docker routes each bridge network from its host, so any local user could connect to
a server a session runs (TensorBoard, a ``torch.distributed`` rendezvous) through the
container's bridge address. With the default ``ContainerHardening.guard_bridges`` a
chain on the host refuses that: here ``nobody`` (through ``setpriv``) is refused by
main1's listener and by its unpublished sshd, while root on the host, sub1 beside it
and ``nobody`` through main1's published SSH port all get through. A session
launched with the guard off is reached by ``nobody`` the same way: the probe is one
that would catch the leak. A guard helper left behind by an engine killed while it
ran, or before it started it, is removed by the next launch that puts the guard. (A
firewall reset under a running session: ``tests/server/test_bridge_guard_refresh.py``.)
"""

from __future__ import annotations

import subprocess
import time

import pytest

from jupyter_cluster.engine.agents.host_guard import HELPER_LABELS
from tests.support.bridge_probe import (
    CONNECT,
    PORT,
    SERVER,
    bridge_address,
    connect,
    published_ssh,
    wait_listening,
)
from tests.support.constants import SMALL_FLAGS
from tests.support.docker import container_exists, docker, helper_left

from .support import Workspace

pytestmark = pytest.mark.docker


def test_another_local_user_cannot_connect_into_a_session_but_its_peers_can(
    ws: Workspace,
) -> None:
    session = ws.launch("--size", "2", *SMALL_FLAGS, "--name", "guarded")
    ws.sh("guarded", "main1", SERVER)
    address, bridge = bridge_address(str(session["id"]), "main1")
    assert bridge.startswith("jcs"), bridge
    ssh_host, ssh_port = published_ssh(str(session["id"]))

    # Root on the host and sub1 reach the server (once it listens), nobody does not.
    wait_listening(address)
    assert "reached" in ws.sh("guarded", "sub1", f'python3 -c "{CONNECT}" main1 {PORT}')
    assert connect(address, PORT, as_nobody=True) == "refused 111"  # reset at once
    assert connect(address, 22, as_nobody=True) == "refused 111"  # sshd, not published
    # main1's published SSH port (key-authenticated) is as reachable as before.
    assert connect(ssh_host, ssh_port, as_nobody=True) == "reached"
    ws.ok_cli("rm", "guarded")


def test_with_the_guard_off_another_local_user_connects(ws: Workspace) -> None:
    ws.write_config("c.ContainerHardening.guard_bridges = False\n")
    session = ws.launch("--size", "1", *SMALL_FLAGS, "--name", "open")
    ws.sh("open", "main1", SERVER)
    address, bridge = bridge_address(str(session["id"]), "main1")
    assert bridge == ""  # Docker's br-… name: the host's chain does not match it
    seen = ""
    for _ in range(50):
        seen = connect(address, PORT, as_nobody=True)
        if seen == "reached":
            break
        subprocess.run(["sleep", "0.2"], check=True)
    assert seen == "reached"
    ws.ok_cli("rm", "open")


def test_a_guard_helper_left_behind_is_removed_by_the_next_launch(ws: Workspace) -> None:
    stale = helper_left(HELPER_LABELS, time.time() - 600, ran=True)
    recent = helper_left(HELPER_LABELS, time.time(), ran=True)
    never_run = helper_left(HELPER_LABELS, time.time() - 600, ran=False)
    try:
        ws.launch("--size", "1", *SMALL_FLAGS, "--name", "sweeps")  # a new process: puts it
        assert not container_exists(stale)
        assert not container_exists(never_run)
        assert container_exists(recent)  # another engine may still be reading it
        ws.ok_cli("rm", "sweeps")
    finally:
        docker("rm", "-f", stale, recent, never_run, check=False)
