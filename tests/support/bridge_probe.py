"""Probing a session container's bridge address from this host, as root or ``nobody``.

Used by the tests of the guard of session bridges (``tests/integration/
test_bridge_guard.py`` through the CLI, ``tests/server/test_bridge_guard_refresh.py``
through a real Jupyter server): a listener started in main1, a connection to it from
this host as root or as another Unix user, and the firewall reset that a reload
would do.
"""

from __future__ import annotations

import pwd
import subprocess
import time
from typing import Any

from jupyter_cluster.core.host_guard import GUARD_CHAIN
from tests.support.constants import BIN
from tests.support.docker import IMAGE, docker, inspect

PORT = 8123
#: Connect to argv[1]:argv[2]; print "reached" or "refused ERRNO".
CONNECT = (
    "import socket,sys\n"
    "try:\n"
    "    socket.create_connection((sys.argv[1], int(sys.argv[2])), 5).close(); print('reached')\n"
    "except OSError as e: print('refused', e.errno)"
)
#: A listener on PORT in a container, started in the background.
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


def wait_listening(address: str, port: int = PORT) -> None:
    """Wait (10 s at most) until root on this host reaches ``address:port``."""
    for _ in range(50):
        if connect(address, port, as_nobody=False) == "reached":
            return
        time.sleep(0.2)
    assert connect(address, port, as_nobody=False) == "reached"


def bridge_address(session_id: str, host: str) -> tuple[str, str]:
    """The session container ``host``'s address on its network, and that network's
    Linux bridge name ("" when Docker named it)."""
    container: Any = inspect(f"jc-{session_id[:12]}-{host}")[0]
    ((name, settings),) = container["NetworkSettings"]["Networks"].items()
    options = inspect(name)[0]["Options"] or {}
    return settings["IPAddress"], options.get("com.docker.network.bridge.name", "")


def published_ssh(session_id: str) -> tuple[str, int]:
    """Where main1's SSH port is published on this host."""
    container: Any = inspect(f"jc-{session_id[:12]}-main1")[0]
    ports = container["NetworkSettings"]["Ports"]
    ((_, bindings),) = [(k, v) for k, v in ports.items() if v]
    return bindings[0]["HostIp"], int(bindings[0]["HostPort"])


def reset_firewall() -> None:
    """Empty the guard's chain on this host, as a firewall reload would (root, with a
    throwaway container of the helper's image in the host's network namespace)."""
    caps = ("--cap-add", "NET_ADMIN", "--cap-add", "NET_RAW")
    docker("run", "--rm", "--network", "host", *caps, IMAGE, "iptables", "-w", "-F", GUARD_CHAIN)
