"""Restricted egress (``c.ContainerHardening.restrict_egress``) on real Docker.

A TCP listener on every address of this machine (the agent) stands in for a
service on the agent host. From a session without the switch it answers; from
every container of a restricted session it is refused at once, on its gateway and
on every other address of the host: its LAN address, ``docker0``, and the gateways
of other sessions' networks, made before the restricted session and after it
(review X7: only the gateway and the configured address were denied before). So is
the link-local (cloud metadata) range and a configured extra range. The routes are
in place before the bootstrap command runs, root inside a container cannot
remove them (no NET_ADMIN), traffic between the session's containers still works,
sessions without the switch still reach the host while the host's chain is there,
and the helper containers that set the rules are gone.
"""

from __future__ import annotations

import ipaddress
import json
import socket
import subprocess
import threading
from collections.abc import Iterator

import pytest
from jupyter_client.manager import AsyncKernelManager

from tests.support.constants import SMALL_FLAGS
from tests.support.docker import docker, remove_egress_chain, session_objects
from tests.support.kernels import ok_cell, start_client

from .support import Workspace

pytestmark = pytest.mark.docker

#: Connect to the default gateway (the agent) on PORT; print what happened.
PROBE = (
    'python3 -c "import socket,subprocess,sys\n'
    "gw=subprocess.check_output(['sh','-c','ip route show default'],text=True).split()[2]\n"
    "try:\n"
    "    socket.create_connection((gw,int(sys.argv[1])),5).close(); print('reached')\n"
    "except OSError as e: print('refused', e.errno)\" {port}"
)

#: Connect to each address of argv[2:] on port argv[1]; print a JSON map of what happened.
HOST_PROBE = (
    'python3 -c "import json,socket,sys\n'
    "seen={{}}\n"
    "for h in sys.argv[2:]:\n"
    "    try:\n"
    "        socket.create_connection((h,int(sys.argv[1])),5).close(); seen[h]='reached'\n"
    "    except OSError as e: seen[h]='refused %s' % e.errno\n"
    'print(json.dumps(seen))" {port} {hosts}'
)

#: Connect to the cloud metadata address.
METADATA = "import socket; socket.create_connection(('169.254.169.254', 80), 5)"


def host_addresses() -> list[str]:
    """This machine's IPv4 addresses but loopback and the bridges of Docker networks
    (other tests' networks come and go): its LAN address and docker0's."""
    out = subprocess.run(
        ["ip", "-4", "-o", "addr", "show"], capture_output=True, text=True, check=True
    ).stdout
    found = []
    for line in out.splitlines():
        device, address = line.split()[1], line.split()[3].split("/")[0]
        if device.startswith(("br-", "jc", "veth", "docker_gwbridge")):
            continue
        if not ipaddress.ip_address(address).is_loopback:
            found.append(address)
    return found


def gateway(network: str) -> str:
    """The gateway address of a Docker network (the host's address on its bridge)."""
    shown = json.loads(docker("network", "inspect", network).stdout)[0]
    return str(shown["IPAM"]["Config"][0]["Gateway"])


@pytest.fixture
def host_chain() -> Iterator[None]:
    """Remove the host's egress chain after the test."""
    yield
    remove_egress_chain()


@pytest.fixture
def listener() -> Iterator[int]:
    """A port on every address of this machine that accepts and closes connections."""
    server = socket.create_server(("0.0.0.0", 0))
    server.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                server.accept()[0].close()
            except TimeoutError:
                continue

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    stop.set()
    thread.join(5)
    server.close()


def test_restricted_egress_denies_the_agent_and_metadata(
    ws: Workspace, listener: int, host_chain: None
) -> None:
    probe = PROBE.format(port=listener)
    free = ws.launch(*SMALL_FLAGS, "--name", "free")
    assert ws.sh("free", "main1", probe).strip() == "reached"  # the control

    ws.write_config(
        "c.ContainerHardening.restrict_egress = True\n"
        "c.ContainerHardening.egress_deny = ['agent', '169.254.0.0/16', '198.51.100.0/24']\n"
    )
    bootstrap = f"{probe} > /home/work/at-bootstrap.txt"
    session = ws.launch("--size", "2", *SMALL_FLAGS, "--name", "walled", "--bootstrap", bootstrap)
    ws.write_config("")
    later = ws.launch(*SMALL_FLAGS, "--name", "later")  # a bridge made after the walled one
    # the LAN address, docker0's, and the gateways of other sessions' bridges (one made
    # before the restricted session, one after), its own too
    others = [gateway(f"jc-{s['id'][:12]}") for s in (free, session, later)]
    addresses = [*host_addresses(), *others]
    assert len(addresses) >= 4, addresses
    host_probe = HOST_PROBE.format(port=listener, hosts=" ".join(addresses))
    reached = json.loads(ws.sh("later", "main1", host_probe))
    assert set(reached.values()) == {"reached"}, reached  # unrestricted, chain or not
    for host in ("main1", "sub1"):
        walled = json.loads(ws.sh("walled", host, host_probe))
        assert set(walled) == set(addresses)
        assert all(v.startswith("refused") for v in walled.values()), walled
    for host in ("main1", "sub1"):
        assert ws.sh("walled", host, "cat at-bootstrap.txt").strip() == "refused 111"
        assert ws.sh("walled", host, probe).strip() == "refused 111"  # reset at once
        routes = {line.strip() for line in ws.sh("walled", host, "ip route show").splitlines()}
        assert {"prohibit 169.254.0.0/16", "prohibit 198.51.100.0/24"} <= routes
        metadata = ws.exec("walled", host, "python3", "-c", METADATA)
        assert "PermissionError" in metadata.stderr  # refused at once, not a timeout
    assert ws.sh("walled", "main1", "ssh sub1 hostname").strip() == "sub1"
    containers, _ = session_objects(session["id"])
    assert len(containers) == 2  # the helpers that set the rules are gone
    name = f"jc-{session['id'][:12]}-main1"
    undo = docker(
        "exec", "-u", "0", name, "ip", "route", "del", "prohibit", "169.254.0.0/16", check=False
    )
    assert undo.returncode != 0 and "not permitted" in undo.stderr
    for made in (session, free, later):
        ws.ok_cli("rm", made["id"])


async def test_the_hosts_own_connections_reach_a_restricted_session(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch, host_chain: None
) -> None:
    """A cluster kernel (its ports reached from this host through Docker's proxy, whose
    source is the gateway) and SSH between the containers work in a restricted
    session: only new connections towards the host are refused, not replies. (With
    a prohibit route to the gateway, as before, the kernel never answered.)"""
    ws.write_config("c.ContainerHardening.restrict_egress = True\n")
    name = ws.install_kernelspec(monkeypatch, "itest-walled", "--size", "2", *SMALL_FLAGS)
    km = AsyncKernelManager(kernel_name=name)
    kc = await start_client(km)
    try:
        cell = await ok_cell(
            kc, "import subprocess; print(subprocess.getoutput('ssh sub1 hostname'))"
        )
        assert cell.stdout == "sub1\n"
    finally:
        kc.stop_channels()
        await km.shutdown_kernel(now=True)
