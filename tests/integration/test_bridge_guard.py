"""Another user of the agent host cannot connect to listeners in session containers.

Docker routes each bridge network from its host, so any local user could connect to
a server a session runs (TensorBoard, a ``torch.distributed`` rendezvous) through the
container's bridge address. With the default ``ContainerHardening.guard_bridges`` a
chain on the host refuses that: here ``nobody`` (through ``setpriv``) is refused by
main1's listener and by its unpublished sshd, while root on the host, sub1 beside it
and ``nobody`` through main1's published SSH port all get through. A session
launched with the guard off is reached by ``nobody`` the same way: the probe is one
that would catch the leak. A guard helper left behind by an engine killed while it
ran is removed by the next launch that puts the guard. When the host's firewall is
reset while a session runs, a server's upkeep puts the guard back within
``guard_refresh`` (and a quarter), with no launch.
"""

from __future__ import annotations

import json
import pwd
import subprocess
import time

import pytest
from traitlets.config import Config

from jupyter_cluster.core.host_guard import GUARD_CHAIN
from jupyter_cluster.engine.guard_refresh import GuardRefresh
from tests.support.constants import BIN, SMALL_FLAGS
from tests.support.docker import IMAGE, container_exists, docker
from tests.support.waiting import eventually

from .support import Workspace

pytestmark = pytest.mark.docker

PORT = 8123
#: Connect to argv[1]:argv[2]; print "reached" or "refused ERRNO".
CONNECT = (
    "import socket,sys\n"
    "try:\n"
    "    socket.create_connection((sys.argv[1], int(sys.argv[2])), 5).close(); print('reached')\n"
    "except OSError as e: print('refused', e.errno)"
)
SERVER = f"nohup python3 -m http.server {PORT} >/dev/null 2>&1 &"


def connect(address: str, port: int, as_nobody: bool) -> str:
    """What a connection from this host to ``address:port`` met, as root or ``nobody``."""
    argv = [str(BIN / "python3"), "-c", CONNECT, address, str(port)]
    if as_nobody:
        nobody = pwd.getpwnam("nobody")
        ids = (f"--reuid={nobody.pw_uid}", f"--regid={nobody.pw_gid}", "--clear-groups")
        argv = ["setpriv", *ids, "--", *argv]
    result = subprocess.run(argv, capture_output=True, text=True, timeout=30, cwd="/")
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def inspect(name: str) -> dict[str, object]:
    """``docker inspect NAME`` (a container or a network)."""
    out = docker("inspect", name).stdout
    found: list[dict[str, object]] = json.loads(out)
    return found[0]


def bridge_address(session: dict[str, object], host: str) -> tuple[str, str]:
    """The session container ``host``'s address on its network, and that network's
    Linux bridge name ("" when Docker named it)."""
    container = inspect(f"jc-{str(session['id'])[:12]}-{host}")
    networks = container["NetworkSettings"]["Networks"]  # type: ignore[index]
    ((name, settings),) = networks.items()
    options = inspect(name)["Options"] or {}
    return settings["IPAddress"], options.get("com.docker.network.bridge.name", "")  # type: ignore[union-attr]


def published_ssh(session: dict[str, object]) -> tuple[str, int]:
    """Where main1's SSH port is published on this host."""
    ports = inspect(f"jc-{str(session['id'])[:12]}-main1")["NetworkSettings"]["Ports"]  # type: ignore[index]
    ((_, bindings),) = [(k, v) for k, v in ports.items() if v]
    return bindings[0]["HostIp"], int(bindings[0]["HostPort"])


def test_another_local_user_cannot_connect_into_a_session_but_its_peers_can(
    ws: Workspace,
) -> None:
    session = ws.launch("--size", "2", *SMALL_FLAGS, "--name", "guarded")
    ws.sh("guarded", "main1", SERVER)
    address, bridge = bridge_address(session, "main1")
    assert bridge.startswith("jcs"), bridge
    ssh_host, ssh_port = published_ssh(session)

    # Root on the host and sub1 reach the server (once it listens), nobody does not.
    for _ in range(50):
        if connect(address, PORT, as_nobody=False) == "reached":
            break
        subprocess.run(["sleep", "0.2"], check=True)
    assert connect(address, PORT, as_nobody=False) == "reached"
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
    address, bridge = bridge_address(session, "main1")
    assert bridge == ""  # Docker's br-… name: the host's chain does not match it
    seen = ""
    for _ in range(50):
        seen = connect(address, PORT, as_nobody=True)
        if seen == "reached":
            break
        subprocess.run(["sleep", "0.2"], check=True)
    assert seen == "reached"
    ws.ok_cli("rm", "open")


def _helper_left(started: float) -> str:
    """A guard helper as an engine killed while it ran leaves it: exited, with the
    helper's labels, started at ``started`` (seconds since the epoch); its id."""
    labels = ("--label", "jupyter-cluster.helper=host-guard")
    labels += ("--label", f"jupyter-cluster.helper-started={started:.0f}")
    return docker("run", "-d", *labels, "--entrypoint", "true", IMAGE).stdout.strip()


def test_a_guard_helper_left_behind_is_removed_by_the_next_launch(ws: Workspace) -> None:
    stale, recent = _helper_left(time.time() - 600), _helper_left(time.time())
    try:
        ws.launch("--size", "1", *SMALL_FLAGS, "--name", "sweeps")  # a new process: puts it
        assert not container_exists(stale)
        assert container_exists(recent)  # another engine may still be reading it
        ws.ok_cli("rm", "sweeps")
    finally:
        docker("rm", "-f", stale, recent, check=False)


def reset_firewall() -> None:
    """Empty the guard's chain on this host, as a firewall reload would (root, with a
    throwaway container of the helper's image in the host's network namespace)."""
    caps = ("--cap-add", "NET_ADMIN", "--cap-add", "NET_RAW")
    docker("run", "--rm", "--network", "host", *caps, IMAGE, "iptables", "-w", "-F", GUARD_CHAIN)


@pytest.mark.serial  # opens every session bridge of the host for a moment
async def test_a_reset_firewall_is_guarded_again_while_the_session_runs(ws: Workspace) -> None:
    manager = ws.manager(config=Config({"ContainerHardening": {"guard_refresh": 2.0}}))
    (refresh,) = [j for j in manager.upkeep(lambda: None) if isinstance(j, GuardRefresh)]
    session = await manager.launch(manager.make_spec(size=1, cpu=0.25, mem="256m"))
    try:
        assert await manager.exec(session.id, "main1", ["sh", "-c", SERVER]) == 0
        info = {"id": session.id}
        address, _ = bridge_address(info, "main1")
        for _ in range(50):
            if connect(address, PORT, as_nobody=False) == "reached":
                break
            subprocess.run(["sleep", "0.2"], check=True)
        assert connect(address, PORT, as_nobody=True) == "refused 111"
        reset_firewall()
        assert connect(address, PORT, as_nobody=True) == "reached"  # the probe can fail
        refresh.start()

        async def refused() -> bool:
            return connect(address, PORT, as_nobody=True) == "refused 111"

        began = time.monotonic()
        await eventually(refused, 20, "the guard put back by the server's upkeep")
        assert time.monotonic() - began < 2.0 * 1.25 + 5  # refresh and a quarter, and a run
    finally:
        await refresh.stop()
        await manager.terminate(session.id)
        await manager.close()
