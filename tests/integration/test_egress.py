"""Restricted egress (``c.ContainerHardening.restrict_egress``) on real Docker.

A TCP listener on every address of this machine (the agent) stands in for a
service on the agent host. From a session without the switch it answers; from
every container of a restricted session it is refused at once, and so is the
link-local (cloud metadata) range and a configured extra range. The routes are
in place before the bootstrap command runs, root inside a container cannot
remove them (no NET_ADMIN), traffic between the session's containers still works,
and the helper containers that set the rules are gone.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator

import pytest

from tests.support.constants import SMALL_FLAGS
from tests.support.docker import docker, session_objects

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

#: Connect to the cloud metadata address.
METADATA = "import socket; socket.create_connection(('169.254.169.254', 80), 5)"


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


def test_restricted_egress_denies_the_agent_and_metadata(ws: Workspace, listener: int) -> None:
    probe = PROBE.format(port=listener)
    free = ws.launch(*SMALL_FLAGS, "--name", "free")
    assert ws.sh("free", "main1", probe).strip() == "reached"  # the control
    ws.ok_cli("rm", free["id"])

    ws.write_config(
        "c.ContainerHardening.restrict_egress = True\n"
        "c.ContainerHardening.egress_deny = ['agent', '169.254.0.0/16', '198.51.100.0/24']\n"
    )
    bootstrap = f"{probe} > /home/work/at-bootstrap.txt"
    session = ws.launch("--size", "2", *SMALL_FLAGS, "--name", "walled", "--bootstrap", bootstrap)
    for host in ("main1", "sub1"):
        assert ws.sh("walled", host, "cat at-bootstrap.txt").strip() == "refused 13"
        assert ws.sh("walled", host, probe).strip() == "refused 13"
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
    ws.ok_cli("rm", session["id"])
