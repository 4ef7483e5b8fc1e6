"""Fast networking per resource group on the local engine (``c.FastNetworking``).

A group with an MTU gets it on the session network (seen inside the containers
and by ``docker network inspect``). A group with RDMA gets the agent's device
nodes passed through, with IPC_LOCK and no memlock limit; there is no InfiniBand
here, so the "agent's devices" are character nodes the test makes (copies of
/dev/null) in a directory the group names. A group without RDMA, or an agent
without such a directory, gets neither the nodes nor the capability nor the ulimit.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from tests.support.constants import SMALL_FLAGS
from tests.support.docker import docker, session_objects

from .support import Workspace

pytestmark = pytest.mark.docker
IPC_LOCK_BIT = 14  # capabilities(7)
PROBE = (
    "cat /sys/class/net/eth0/mtu; ulimit -l; "
    "awk '/^CapEff/ {print $2}' /proc/1/status; "  # init: root with the container's set
    'for f in "$1"/*; do [ -c "$f" ] && echo "dev $f"; done; true'
)

DATAGRAMS = """
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.IPPROTO_IP, 10, 2)  # IP_MTU_DISCOVER: IP_PMTUDISC_DO (never fragment)
s.connect(("sub1", 9))
s.send(bytes(1400 - 28))
print("ok")
try:
    s.send(bytes(1401 - 28))
except OSError:
    print("big")
"""


def _probe(ws: Workspace, name: str, host: str, devices: str) -> tuple[int, str, bool, list[str]]:
    """(eth0's MTU, ulimit -l, IPC_LOCK in CapEff, device nodes under ``devices``)."""
    out = ws.exec(name, host, "sh", "-c", PROBE, "probe", devices)
    assert out.returncode == 0, str(out)
    mtu, memlock, cap_eff, *nodes = out.stdout.split("\n")
    ipc_lock = bool(int(cap_eff, 16) >> IPC_LOCK_BIT & 1)
    return int(mtu), memlock, ipc_lock, [n.removeprefix("dev ") for n in nodes if n]


def _config(groups: str) -> str:
    return f"c.FastNetworking.resource_groups = {groups}\n"


def test_a_groups_mtu_is_the_session_networks(ws: Workspace) -> None:
    ws.write_config(_config("{'default': {'mtu': 1400}}"))
    session = ws.launch("--size", "2", *SMALL_FLAGS, "--name", "small-mtu")
    _, networks = session_objects(session["id"])
    options = docker("network", "inspect", "--format", "{{json .Options}}", *networks)
    assert '"com.docker.network.driver.mtu":"1400"' in options.stdout
    for host in ("main1", "sub1"):
        mtu, memlock, ipc_lock, nodes = _probe(ws, "small-mtu", host, "/dev/infiniband")
        assert (mtu, ipc_lock, nodes) == (1400, False, [])
        assert memlock != "unlimited"
    # The kernel sends a datagram of the whole MTU unfragmented, and not one byte more.
    assert ws.exec("small-mtu", "main1", "python3", "-c", DATAGRAMS).stdout.split() == ["ok", "big"]
    ws.ok_cli("rm", "small-mtu")


def _fake_devices(root: Path) -> list[str]:
    """Character nodes standing in for an agent's /dev/infiniband (as /dev/null)."""
    root.mkdir()
    null = os.stat("/dev/null").st_rdev
    for name in ("uverbs0", "rdma_cm"):
        os.mknod(root / name, 0o666 | stat.S_IFCHR, null)
        os.chmod(root / name, 0o666)  # as udev makes the real ones (no umask)
    (root / "not-a-device").write_text("")
    return sorted(str(root / n) for n in ("rdma_cm", "uverbs0"))


def test_an_rdma_group_gets_the_agents_devices_ipc_lock_and_its_memlock(
    ws: Workspace, tmp_path: Path
) -> None:
    devices = tmp_path / "infiniband"
    nodes = _fake_devices(devices)
    # 4m: under this engine's own memlock limit (it cannot lift it: see the next test).
    group = f"{{'rdma': True, 'rdma_devices': '{devices}', 'memlock': '4m'}}"
    ws.write_config(_config(f"{{'default': {group}}}"))
    session = ws.launch("--size", "2", *SMALL_FLAGS, "--name", "rdma")
    for host in ("main1", "sub1"):
        _, memlock, ipc_lock, found = _probe(ws, "rdma", host, str(devices))
        assert (memlock, ipc_lock, found) == ("4096", True, nodes)
        # The node works for user work as on the agent (read and write, like /dev/null).
        assert ws.sh("rdma", host, f"echo x > {nodes[1]} && wc -c < {nodes[1]}").strip() == "0"
    containers, _ = session_objects(session["id"])
    out = docker("inspect", "--format", "{{json .HostConfig.CapAdd}}", containers[0])
    assert "IPC_LOCK" in out.stdout
    ws.ok_cli("rm", "rdma")

    # An agent without the directory: the same group's session gets none of it.
    ws.write_config(_config(f"{{'default': {{'rdma': True, 'rdma_devices': '{tmp_path}/no'}}}}"))
    ws.launch(*SMALL_FLAGS, "--name", "bare")
    _, memlock, ipc_lock, found = _probe(ws, "bare", "main1", str(devices))
    assert (memlock != "4096", memlock != "unlimited", ipc_lock, found) == (True, True, False, [])
    ws.ok_cli("rm", "bare")


def _can_lift_limits() -> bool:
    """Whether this machine's processes (the local engine's too) may hold
    CAP_SYS_RESOURCE, which lifting a hard limit needs (bit 24 of CapBnd)."""
    status = Path("/proc/self/status").read_text()
    bounding = next(line for line in status.splitlines() if line.startswith("CapBnd"))
    return bool(int(bounding.split()[1], 16) >> 24 & 1)


def test_no_memlock_limit_or_a_clear_error_where_the_engine_cannot(
    ws: Workspace, tmp_path: Path
) -> None:
    devices = tmp_path / "infiniband"
    _fake_devices(devices)
    ws.write_config(_config(f"{{'default': {{'rdma': True, 'rdma_devices': '{devices}'}}}}"))
    if _can_lift_limits():
        ws.launch(*SMALL_FLAGS, "--name", "unlimited")
        assert _probe(ws, "unlimited", "main1", str(devices))[1:3] == ("unlimited", True)
        ws.ok_cli("rm", "unlimited")
        return
    failed = ws.cli("launch", *SMALL_FLAGS, "--name", "unlimited")
    assert failed.returncode != 0
    assert "may not lift the memlock limit" in failed.stderr, str(failed)
    assert "memlock in FastNetworking.resource_groups" in failed.stderr
    assert ws.docker_objects() == ([], [])  # nothing of the failed launch is left
