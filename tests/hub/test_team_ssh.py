"""``jupyter cluster ssh`` in team mode (#24 item 4): through the shared service.

alice, as her Unix user with her Hub token (as in a terminal of her server), runs
``jupyter-cluster ssh`` on her session: the key comes from the service's owner-only
route and reaches main1 and a sub through it. bob, as his Unix user, gets nothing of
her session: not found, and no key written anywhere. Nor can he connect to a server
she runs in main1 through its bridge address (the guard of session bridges).
"""

from __future__ import annotations

import subprocess

from tests.support.constants import BIN, SMALL_BODY
from tests.support.docker import docker
from tests.support.waiting import wait_for

from .support import Hub, end_sessions, launch, wait_running


def test_a_user_reaches_their_own_containers_and_nobody_elses(
    hub: Hub, team: dict[str, str]
) -> None:
    alice = team["alice"]
    session = launch(hub, "alice", alice, {**SMALL_BODY, "size": 2})
    try:
        wait_running(hub, "alice", alice, session["id"])
        cli = str(BIN / "jupyter-cluster")
        mine = hub.run_as("alice", [cli, "ssh", session["id"], "sub1", "--", "hostname"])
        assert mine.returncode == 0 and mine.stdout == "sub1\n", mine
        theirs = hub.run_as("bob", [cli, "ssh", session["id"], "--", "hostname"])
        assert theirs.returncode == 2 and "main1" not in theirs.stdout, theirs
        assert "no session" in theirs.stderr.lower(), theirs
    finally:
        end_sessions(hub, "alice", alice)


#: Connect to argv[1]:argv[2]; print "reached" or "refused ERRNO".
CONNECT = (
    "import socket,sys\n"
    "try:\n"
    "    socket.create_connection((sys.argv[1], int(sys.argv[2])), 5).close(); print('reached')\n"
    "except OSError as e: print('refused', e.errno)"
)


def test_no_user_of_the_host_connects_to_a_server_in_anothers_container(
    hub: Hub, team: dict[str, str]
) -> None:
    """A password-less server alice runs in main1 (TensorBoard, a rendezvous): bob, as
    his Unix user, cannot connect to it through main1's bridge address, nor can alice
    from her shell on the host (she has the app proxy and port-forward); root can,
    which shows that it listens."""
    alice = team["alice"]
    session = launch(hub, "alice", alice, {**SMALL_BODY, "size": 1})
    try:
        wait_running(hub, "alice", alice, session["id"])
        cli = str(BIN / "jupyter-cluster")
        server = "nohup python3 -m http.server 8123 >/dev/null 2>&1 &"
        started = hub.run_as("alice", [cli, "ssh", session["id"], "--", "sh", "-c", server])
        assert started.returncode == 0, started
        name = f"jc-{session['id'][:12]}-main1"
        fmt = "{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}"
        address = docker("inspect", "--format", fmt, name).stdout.strip()
        probe = [str(BIN / "python3"), "-c", CONNECT, address, "8123"]

        def as_root() -> bool:
            seen = subprocess.run(probe, capture_output=True, text=True, timeout=30)
            return seen.stdout.strip() == "reached"

        wait_for(as_root, 30, f"the server in main1 ({address}:8123) to answer root")
        for user in ("bob", "alice"):
            seen = hub.run_as(user, probe)
            assert seen.stdout.strip() == "refused 111", (user, seen)
    finally:
        end_sessions(hub, "alice", alice)
