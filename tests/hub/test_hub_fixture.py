"""The ``hub`` fixture gives what it says: servers as their Unix users, no Docker for them,
the cluster service registered, and servers' tokens that may call it.

Nothing here tests the cluster API itself, except that the service answers
(:func:`test_service_answers`).
"""

from __future__ import annotations

import grp
import json
import pwd
import stat
from pathlib import Path

import pytest
import requests

from .support import ADMIN, SERVICE, SERVICE_SCOPE, USERS, Hub, ok

pytestmark = pytest.mark.docker

DOCKER_SOCKET = Path("/var/run/docker.sock")

#: Run as a user: try to open and to connect to the Docker socket; print what happened.
DOCKER_PROBE = """
import json, socket, sys
seen = {}
try:
    open(sys.argv[1]).close()
    seen["open"] = "opened"
except OSError as exc:
    seen["open"] = type(exc).__name__
s = socket.socket(socket.AF_UNIX)
try:
    s.connect(sys.argv[1])
    seen["connect"] = "connected"
except OSError as exc:
    seen["connect"] = type(exc).__name__
print(json.dumps(seen))
"""


def uid_of(pid: int) -> int:
    """The real uid of process ``pid``."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Uid:"):
            return int(line.split()[1])
    raise AssertionError(f"no Uid in /proc/{pid}/status")


def whoami(hub: Hub, token: str) -> dict:
    """``GET /hub/api/user`` with ``token``, straight to the Hub as the service calls it."""
    reply = requests.get(
        f"{hub.api_url}/user", headers={"Authorization": f"token {token}"}, timeout=30
    )
    return dict(ok(reply).json())


@pytest.mark.parametrize("user", USERS)
def test_servers_run_as_their_unix_users(hub: Hub, user: str) -> None:
    """A user's single-user server is a process of the Unix user of that name."""
    base = hub.start_server(user)
    assert base == f"{hub.url}/user/{user}/"
    pid = hub.server_pid(user)
    assert pid is not None
    assert uid_of(pid) == pwd.getpwnam(user).pw_uid
    ok(hub.server_call(user, "GET", "api/status", token=hub.token(user)))


def test_named_server_starts_answers_and_stops(hub: Hub) -> None:
    """Named servers: one of alice's answers her token at its own URL, as alice, and stops."""
    base = hub.start_server("alice", "second")
    assert base == f"{hub.url}/user/alice/second/"
    pid = hub.server_pid("alice", "second")
    assert pid is not None and uid_of(pid) == pwd.getpwnam("alice").pw_uid
    ok(hub.server_call("alice", "GET", "api/status", token=hub.token("alice"), name="second"))
    hub.stop_server("alice", "second")
    assert hub.server_pid("alice", "second") is None
    assert not Path(f"/proc/{pid}").exists()


@pytest.mark.parametrize("user", [*USERS, ADMIN])
def test_users_have_no_docker_group(hub: Hub, user: str) -> None:
    """No Hub user is in the docker group, as the system sees it and as their processes run."""
    try:
        docker = grp.getgrnam("docker")
    except KeyError:
        return  # no docker group: nobody can be in it
    assert user not in docker.gr_mem
    assert pwd.getpwnam(user).pw_gid != docker.gr_gid
    result = hub.run_as(user, ["id", "-G"])
    assert result.returncode == 0, str(result)
    assert str(docker.gr_gid) not in result.stdout.split()


@pytest.mark.parametrize("user", USERS)
def test_docker_socket_is_out_of_reach(hub: Hub, user: str) -> None:
    """Opening or connecting to the Docker socket fails with PermissionError for a user."""
    assert DOCKER_SOCKET.is_socket(), "the Docker engine's socket is missing"
    result = hub.run_as(user, ["python", "-c", DOCKER_PROBE, str(DOCKER_SOCKET)])
    assert result.returncode == 0, str(result)
    assert json.loads(result.stdout) == {"open": "PermissionError", "connect": "PermissionError"}


def test_run_as_has_a_servers_environment(hub: Hub) -> None:
    """run_as: alice's uid and home, this venv's Python, and a token of alice for the service."""
    code = "import json, os, sys; print(json.dumps([os.getuid(), os.getcwd(), sys.prefix]))"
    result = hub.run_as("alice", ["python", "-c", code])
    assert result.returncode == 0, str(result)
    entry = pwd.getpwnam("alice")
    assert json.loads(result.stdout)[:2] == [entry.pw_uid, entry.pw_dir]
    env = hub.user_env("alice")
    assert env["JUPYTER_CLUSTER_SERVICE_URL"] == hub.service_url
    model = whoami(hub, env["JUPYTERHUB_API_TOKEN"])
    assert model["name"] == "alice" and SERVICE_SCOPE in model["scopes"]


def test_cluster_service_is_registered(hub: Hub) -> None:
    """The Hub lists the managed service ``cluster``, with no URL for its proxy to route;
    it listens on its Unix socket: root's, connectable by everyone, in a directory
    that is root's and that only root may write."""
    services = ok(hub.api("GET", "services")).json()
    assert SERVICE in services, services
    cluster = services[SERVICE]
    assert not cluster["url"], cluster
    assert cluster["command"][1:2] == ["serve"]
    assert Path(cluster["command"][0]).name == "jupyter-cluster"
    assert hub.service_url.startswith("http+unix://")
    assert hub.service_url.endswith(f"/services/{SERVICE}/")
    socket = hub.service_socket
    assert socket.is_socket()
    info = socket.stat()
    assert info.st_uid == 0 and stat.S_IMODE(info.st_mode) == 0o666
    folder = socket.parent.stat()
    assert folder.st_uid == 0 and stat.S_IMODE(folder.st_mode) == 0o755
    anonymous = requests.get(f"{hub.url}/services/{SERVICE}/cluster/api/sessions", timeout=30)
    assert anonymous.status_code == 404 or "/hub/login" in anonymous.url, anonymous.url


@pytest.mark.parametrize("user", USERS)
def test_server_token_may_call_the_service(hub: Hub, user: str) -> None:
    """A server's own JUPYTERHUB_API_TOKEN is its user's, holds the service's access scope,
    and still what jupyterhub-singleuser needs (activity, access to itself)."""
    hub.start_server(user)
    model = whoami(hub, hub.server_token(user))
    assert model["kind"] == "user" and model["name"] == user
    scopes = set(model["scopes"])
    assert SERVICE_SCOPE in scopes
    assert {f"users:activity!user={user}", f"access:servers!server={user}/"} <= scopes


def test_service_answers(hub: Hub) -> None:
    """The cluster service answers alice's token (her sessions: none yet), and refuses
    a request without a token with a message instead of a log-in page."""
    reply = hub.service_call("GET", "cluster/api/launch-options", hub.token("alice"))
    assert reply.status_code == 200, reply.text
    assert {f["name"] for f in reply.json()["fields"]} >= {"image", "size", "cpu", "mem"}
    for path in ("cluster/api/sessions", "cluster/api/no-such-route", "api/contents"):
        anonymous = hub.service_call("GET", path)
        assert anonymous.status_code == 403, (path, anonymous.status_code, anonymous.text)
