"""A team on a real JupyterHub: alice and bob launch from their own servers through the
shared service, and neither can see or touch the other's sessions.

Every path is tried from the attacker's side as well as the user's: REST through
the user's own server and directly on the service, the CLI (as the Unix user, with
the user's token), the events stream, the keys endpoint. What must not change
(the other user's session) is checked after every refused attempt.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import threading
import time
from typing import Any

import requests
from tornado.httpclient import HTTPRequest
from tornado.websocket import websocket_connect

from jupyter_cluster.core.naming import SSH_PORT
from tests.server.support import kernel_execute
from tests.support.constants import API, SMALL_BODY, SMALL_FLAGS
from tests.support.waiting import wait_for

from .support import ADMIN, Hub, launch, ok, status, wait_running


def service_call(hub: Hub, method: str, path: str, token: str, **kw: Any) -> Any:
    """Call the shared service itself, on its socket (as a user's server does)."""
    return hub.service_call(method, path, token, **kw)


class EventsReader(threading.Thread):
    """Read a server's SSE events stream in the background, keeping every data line."""

    def __init__(self, url: str, token: str) -> None:
        super().__init__(daemon=True)
        self.url, self.token = url, token
        self.events: list[dict[str, Any]] = []
        self.stop = threading.Event()

    def run(self) -> None:
        headers = {"Authorization": f"token {self.token}"}
        try:
            with requests.get(self.url, headers=headers, stream=True, timeout=60) as reply:
                for line in reply.iter_lines(decode_unicode=True):
                    if line and line.startswith("data: "):
                        self.events.append(json.loads(line[6:]))
                    if self.stop.is_set():
                        return
        except requests.RequestException:
            return  # the server went away at the end of the tests


def session_ids(events: list[dict[str, Any]]) -> set[str]:
    """Every session id an events stream carried (snapshots included)."""
    found = set()
    for event in events:
        if event.get("type") == "snapshot":
            found.update(s["id"] for s in event["sessions"])
        elif "session_id" in event:
            found.add(event["session_id"])
    return found


def test_alice_and_bob_see_and_act_on_only_their_own_sessions(
    hub: Hub, team: dict[str, str]
) -> None:
    alice, bob, admin = team["alice"], team["bob"], team[ADMIN]
    events_url = hub.server_base("alice") + f"{API}/events"
    alices_events = EventsReader(events_url, alice)
    alices_events.start()
    made: list[tuple[str, str, str]] = []
    try:
        mine = launch(hub, "alice", alice, {**SMALL_BODY, "size": 2, "name": "shared-name"})
        made.append(("alice", alice, mine["id"]))
        # names are per user: bob may use the same one, and learns nothing of alice's
        theirs = launch(hub, "bob", bob, {**SMALL_BODY, "name": "shared-name"})
        made.append(("bob", bob, theirs["id"]))
        assert (mine["owner"], theirs["owner"]) == ("alice", "bob")
        wait_running(hub, "alice", alice, mine["id"])
        wait_running(hub, "bob", bob, theirs["id"])
        sid = theirs["id"]
        listed = ok(hub.server_call("alice", "GET", f"{API}/sessions?all=1", alice)).json()
        assert mine["id"] in {s["id"] for s in listed}
        assert {s["owner"] for s in listed} == {"alice"}  # her history: hers only
        # the same name resolves to each one's own session
        by_name = ok(hub.server_call("bob", "GET", f"{API}/sessions/shared-name", bob)).json()
        assert by_name["id"] == sid
        attempts = [
            ("GET", f"sessions/{sid}"),
            ("GET", f"sessions/{sid[:8]}"),
            ("GET", f"sessions/{sid}/access"),
            ("GET", f"sessions/{sid}/containers/main1/logs"),
            ("POST", f"sessions/{sid}/containers/main1/terminals"),
            ("DELETE", f"sessions/{sid}"),
        ]
        for method, path in attempts:
            through_server = hub.server_call("alice", method, f"{API}/{path}", alice)
            assert through_server.status_code == 404, (method, path, through_server.text)
            direct = service_call(hub, method, f"{API}/{path}", alice)
            assert direct.status_code == 404, (method, path, direct.text)
        # bob's own server refuses alice's token outright (JupyterHub's access scopes)
        assert hub.server_call("bob", "GET", f"{API}/sessions", alice).status_code == 403
        assert status(hub, "bob", bob, sid)["status"] == "RUNNING"  # nothing changed

        # an admin sees both on the service, but never gets another user's keys
        everyone = ok(service_call(hub, "GET", f"{API}/sessions", admin)).json()
        assert {mine["id"], sid} <= {s["id"] for s in everyone}
        keys = service_call(hub, "GET", f"{API}/sessions/{sid}/access", admin)
        assert keys.status_code == 403, keys.text
        # the service runs as root: nothing of its Jupyter server but the cluster routes
        # answers a user (no kernels, files or terminals on the service's machine)
        for method, path in (
            ("GET", "api/contents"),
            ("POST", "api/kernels"),
            ("GET", "api/kernels"),
            ("GET", "api/sessions"),
            ("POST", "api/terminals"),
            ("GET", "files/etc/passwd"),
            ("GET", "lab"),
        ):
            reply = service_call(hub, method, path, alice, json={} if method == "POST" else None)
            assert reply.status_code in (403, 404), (method, path, reply.status_code, reply.text)
        # a token without the service's scope is refused by the service
        narrow = hub.token("alice", ["read:users:name!user=alice"])
        assert service_call(hub, "GET", f"{API}/sessions", narrow).status_code == 403
    finally:
        for user, token, made_id in made:
            hub.server_call(user, "DELETE", f"{API}/sessions/{made_id}", token)
    time.sleep(2)  # alice's stream had time for bob's TERMINATED event, if it leaked
    alices_events.stop.set()
    assert mine["id"] in session_ids(alices_events.events)
    assert sid not in session_ids(alices_events.events), alices_events.events


def test_the_cli_of_a_user_goes_through_the_service_and_only_to_their_sessions(
    hub: Hub, team: dict[str, str]
) -> None:
    cli = "jupyter-cluster"
    bob = team["bob"]
    theirs = launch(hub, "bob", bob, SMALL_BODY)
    try:
        done = hub.run_as("alice", [cli, "launch", *SMALL_FLAGS, "--json"])
        assert done.returncode == 0, done.stderr
        mine = json.loads(done.stdout)
        assert mine["owner"] == "alice" and mine["status"] == "RUNNING"
        # exec goes over SSH with alice's key from the service: she has no Docker
        done = hub.run_as("alice", [cli, "exec", mine["id"], "main1", "--", "hostname"])
        assert (done.returncode, done.stdout.strip()) == (0, "main1"), done.stderr
        done = hub.run_as("alice", [cli, "logs", mine["id"], "main1"])
        assert done.returncode == 0 and done.stdout, done.stderr
        listed = json.loads(hub.run_as("alice", [cli, "ls", "--all", "--json"]).stdout)
        assert theirs["id"] not in {s["id"] for s in listed}
        for argv in (
            ["show", theirs["id"]],
            ["logs", theirs["id"], "main1"],
            ["exec", theirs["id"], "main1", "--", "true"],
            ["rm", theirs["id"]],
        ):
            done = hub.run_as("alice", [cli, *argv])
            assert done.returncode == 2 and "no session" in done.stderr, (argv, done)
        assert status(hub, "bob", bob, theirs["id"])["status"] in ("PREPARING", "RUNNING")

        # data folders: alice's are hers, bob never sees or removes them
        assert hub.run_as("alice", [cli, "folder", "create", "results"]).returncode == 0
        bobs = json.loads(hub.run_as("bob", [cli, "folder", "ls", "--json"]).stdout)
        assert "results" not in {f["name"] for f in bobs}
        assert hub.run_as("bob", [cli, "folder", "rm", "results"]).returncode == 2
        done = hub.run_as("alice", [cli, "rm", mine["id"]])
        assert done.returncode == 0, done.stderr
        assert hub.run_as("alice", [cli, "folder", "rm", "results"]).returncode == 0
    finally:
        hub.server_call("bob", "DELETE", f"{API}/sessions/{theirs['id']}", bob)


async def _execute(hub: Hub, user: str, token: str, kernel_id: str, code: str) -> str:
    url = hub.server_base(user).replace("http", "ws", 1) + f"api/kernels/{kernel_id}/channels"
    ws = await websocket_connect(HTTPRequest(url, headers={"Authorization": f"token {token}"}))
    try:
        return await kernel_execute(ws, code, timeout=120)
    finally:
        ws.close()


def test_a_kernel_started_in_a_users_server_runs_in_main1_over_ssh(
    hub: Hub, team: dict[str, str]
) -> None:
    """The Lab dialog's path: POST sessions with start_kernel; the kernel is alice's
    server's (over the session's SSH), the containers the service's; the kernel sees
    no Docker socket; shutting the session down ends the kernel."""
    alice = team["alice"]
    session = launch(hub, "alice", alice, {**SMALL_BODY, "size": 2, "start_kernel": True})
    sid = session["id"]
    try:
        seen: dict[str, Any] = {}

        def kernel_runs() -> bool:
            seen.update(status(hub, "alice", alice, sid))
            assert seen["kernel_state"] not in ("failed", "gone"), seen
            return bool(seen["kernel_state"] == "running")

        wait_for(kernel_runs, 240, "the session's kernel to run", seen=lambda: seen)
        code = (
            "import os, socket, subprocess, sys\n"
            "print(socket.gethostname(), os.path.exists('/var/run/docker.sock'))\n"
            "print(subprocess.run(['ssh', 'sub1', 'hostname'], capture_output=True,"
            " text=True).stdout)\n"
            # started over SSH as a local kernel starts (core.kernel_command)
            "print(sys._xoptions.get('frozen_modules'), os.environ.get('JPY_PARENT_PID'))"
        )
        out = asyncio.run(_execute(hub, "alice", alice, seen["kernel_id"], code))
        assert out.split() == ["main1", "False", "sub1", "off", "1"], out
        kernels = ok(hub.server_call("alice", "GET", "api/kernels", alice)).json()
        assert seen["kernel_id"] in {k["id"] for k in kernels}
        # main1 publishes its SSH port only: no kernel port other host users could reach
        main1 = next(c for c in seen["containers"] if c["host"] == "main1")
        ports = subprocess.run(
            ["docker", "port", main1["container_id"]], capture_output=True, text=True, check=True
        ).stdout.split("\n")
        assert [p.split(" ")[0] for p in ports if p] == [f"{SSH_PORT}/tcp"], ports
    finally:
        ok(hub.server_call("alice", "DELETE", f"{API}/sessions/{sid}", alice), 204)

    def kernel_gone() -> bool:
        kernels = ok(hub.server_call("alice", "GET", "api/kernels", alice)).json()
        return seen.get("kernel_id") not in {k["id"] for k in kernels}

    wait_for(kernel_gone, 60, "the kernel to be shut down with its session")
    assert status(hub, "alice", alice, sid)["status"] == "TERMINATED"


def test_no_docker_or_agent_credential_reaches_a_users_server(
    hub: Hub, team: dict[str, str]
) -> None:
    """From alice's side of the machine: the Docker socket, the service's store (with
    every session's keys) and its state are out of reach; her server's environment
    names no Docker host or certificate."""
    probe = (
        "import os, socket, sys\n"
        "s = socket.socket(socket.AF_UNIX)\n"
        "try:\n"
        "    s.connect('/var/run/docker.sock'); print('docker: reachable')\n"
        "except OSError as e:\n"
        "    print('docker:', type(e).__name__)\n"
        "for p in sys.argv[1:]:\n"
        "    try:\n"
        "        open(p, 'rb').read(1); print('read', p)\n"
        "    except OSError as e:\n"
        "        print('refused:', type(e).__name__)\n"
    )
    store = str(hub.state / "cluster" / "store" / "cluster.db")
    done = hub.run_as("alice", ["python3", "-c", probe, store])
    assert done.stdout.split("\n")[:2] == ["docker: PermissionError", "refused: PermissionError"]
    from .support import process_env

    pid = hub.server_pid("alice")
    assert pid is not None
    env = process_env(pid)
    assert not {k for k in env if k.startswith("DOCKER_")}, env
    assert env["JUPYTER_CLUSTER_SERVICE_URL"] == hub.service_url
