"""Attacks by one Hub user on another, run as the attacker's real Unix user on the real Hub.

alice is the attacker; every attack runs as Unix ``alice`` (``setpriv``), the way a
terminal in her server or her kernel would run it:

- :func:`test_nobody_logs_in_as_another_user`: alice tries the Hub's log-in form as
  bob and as the Hub admin with every password the earlier example accepted (any
  password; one shared password; her own). Each attempt is refused, while her own
  log-in works (so the form itself is reached and a refusal means something).
- :func:`test_nobody_can_take_the_services_address_during_a_restart`: alice runs a
  loop that tries to take the service's address (the TCP port or the Unix socket
  of ``JUPYTER_CLUSTER_SERVICE_URL``) while the service is killed and JupyterHub
  restarts it, and bob's server calls the service meanwhile. alice never binds
  the address and receives no request, so no token of bob's.

And the example never hands an existing account to the Hub
(:func:`test_the_example_never_takes_over_an_existing_account`): on a host where
``alice`` exists but the example's record does not name her, it refuses to start.
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest
import requests

from tests.support.constants import API
from tests.support.waiting import wait_for

from .launch import EXAMPLE
from .support import ADMIN, USERS, Hub
from .test_team_lifecycle import service_pid

pytestmark = pytest.mark.docker

#: Run as alice: log in to the Hub's form as argv[2] with each password of argv[3:]
#: (JSON), printing one JSON line per attempt: the status, where it sent her, and
#: whether the Hub handed out its log-in cookie.
LOGIN = r"""
import json, re, sys
import requests
hub, user, passwords = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
for password in passwords:
    s = requests.Session()
    page = s.get(hub + "/hub/login", timeout=30)
    xsrf = re.search(r'name="_xsrf" value="([^"]*)"', page.text)
    data = {"username": user, "password": password}
    if xsrf:
        data["_xsrf"] = xsrf.group(1)
    reply = s.post(hub + "/hub/login", data=data, allow_redirects=False, timeout=60)
    print(json.dumps({
        "user": user, "password": password, "status": reply.status_code,
        "location": reply.headers.get("Location", ""),
        "cookie": "jupyterhub-hub-login" in reply.cookies,
    }), flush=True)
"""

#: Run as alice: until argv[2] seconds have passed, try to take the address argv[1]
#: (``tcp:HOST:PORT`` or ``unix:PATH``); once bound, answer every connection 503 and
#: print what it sent. Prints JSON lines: ``bound``, ``request`` (the headers), and at
#: the end (or at SIGTERM) ``tries`` with every kind of error it met.
SQUATTER = r"""
import json, os, signal, socket, sys, time
where, deadline = sys.argv[1], time.monotonic() + float(sys.argv[2])
def stop(*_):
    global deadline
    deadline = 0.0
signal.signal(signal.SIGTERM, stop)
kind, _, rest = where.partition(":")
tries, errors, server = 0, set(), None
while server is None and time.monotonic() < deadline:
    tries += 1
    try:
        if kind == "unix":
            try:
                os.unlink(rest)
            except OSError as exc:
                errors.add(f"unlink: {exc}")
            s = socket.socket(socket.AF_UNIX)
            s.bind(rest)
            os.chmod(rest, 0o666)
        else:
            host, port = rest.rsplit(":", 1)
            s = socket.socket()
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind((host, int(port)))
        s.listen(16)
        server = s
        print(json.dumps({"bound": where}), flush=True)
    except OSError as exc:
        s.close()
        errors.add(f"bind: {exc}")
        time.sleep(0.005)
print(json.dumps({"tries": tries, "errors": sorted(errors)}), flush=True)
while server is not None and time.monotonic() < deadline:
    server.settimeout(0.5)
    try:
        conn, _ = server.accept()
    except socket.timeout:
        continue
    except OSError:
        break
    conn.settimeout(5)
    try:
        head = conn.recv(65536).split(b"\r\n\r\n")[0].decode(errors="replace")
        conn.sendall(b"HTTP/1.1 503 Squatted\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
    except OSError as exc:
        head = f"(error {exc})"
    conn.close()
    print(json.dumps({"request": head}), flush=True)
"""


def as_user(user: str, argv: list[str]) -> list[str]:
    """The ``setpriv`` command line that runs ``argv`` as the Unix user ``user``."""
    entry = pwd.getpwnam(user)
    ids = [f"--reuid={entry.pw_uid}", f"--regid={entry.pw_gid}", "--init-groups"]
    return ["setpriv", *ids, "--", *argv]


def password_of(hub: Hub, user: str) -> str | None:
    """``user``'s log-in password as the Hub's administrator handed it out, if any."""
    passwords = getattr(hub, "passwords", None) or {}
    return passwords.get(user)


def test_nobody_logs_in_as_another_user(hub: Hub) -> None:
    """alice's own log-in works; as bob or the admin, every password is refused."""
    own = password_of(hub, "alice") or "any password"
    shared = os.environ.get("JUPYTER_CLUSTER_HUB_PASSWORD")
    # The earlier example took any password, or one shared by every user (which
    # alice, as a user, knows): try both kinds, and her own.
    tried = ["any password", "", "x", "alice", "bob", "admin", own, *([shared] if shared else [])]

    def attempts(user: str, passwords: list[str]) -> list[dict[str, object]]:
        argv = [sys.executable, "-c", LOGIN, hub.url, user, json.dumps(passwords)]
        done = hub.run_as("alice", argv)
        assert done.returncode == 0, str(done)
        return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]

    def logged_in(attempt: dict[str, object]) -> bool:
        return bool(attempt["cookie"]) or (
            attempt["status"] == 302 and "/hub/login" not in str(attempt["location"])
        )

    (mine,) = attempts("alice", [own])
    assert logged_in(mine), f"alice cannot log in as herself: {mine}"
    victims = sorted({"bob", ADMIN, "admin"})
    # Each refused password costs PAM's failure delay: try the victims side by side.
    with ThreadPoolExecutor(len(victims)) as pool:
        tries = pool.map(lambda victim: attempts(victim, tried), victims)
        per_victim = dict(zip(victims, tries, strict=True))
    for victim, results in per_victim.items():
        assert len(results) == len(tried), results
        accepted = [r for r in results if logged_in(r)]
        assert not accepted, f"alice logged in as {victim}: {accepted}"
        # refused by the log-in form itself, not turned away for trying side by side
        assert {r["status"] for r in results} == {403}, results


def squat_target(service_url: str) -> str:
    """The address of ``service_url`` as :data:`SQUATTER` takes it."""
    url = urlparse(service_url)
    if url.scheme == "http+unix":
        return "unix:" + unquote(url.netloc)
    return f"tcp:{url.hostname}:{url.port or 80}"


def test_nobody_can_take_the_services_address_during_a_restart(
    hub: Hub, team: dict[str, str], tmp_path: Path
) -> None:
    """alice loops on the service's address while it restarts; bob's server calls the
    service meanwhile: alice binds nothing and gets no request, bob's calls work again."""
    bob = team["bob"]
    bob_server_token = hub.server_token("bob")
    old = service_pid(hub)
    assert old is not None, "the cluster service does not run"
    argv = [sys.executable, "-c", SQUATTER, squat_target(hub.service_url), "180"]
    log = tmp_path / "squatter.jsonl"
    with open(log, "w") as out:
        squatter = subprocess.Popen(
            as_user("alice", argv), cwd="/", stdout=out, stderr=subprocess.STDOUT
        )
    try:
        time.sleep(1)  # the loop runs before the service goes away
        os.kill(old, signal.SIGKILL)
        deadline = time.monotonic() + 150
        back = False
        while time.monotonic() < deadline and not back:
            # bob's server calls the service with its own token, as his Lab does
            try:
                reply = hub.server_call("bob", "GET", f"{API}/sessions", bob, timeout=10)
                back = reply.ok and service_pid(hub) not in (None, old)
            except requests.RequestException:
                pass
            if squatter.poll() is not None or '"request"' in log.read_text():
                break  # it ended, or it already has what it came for
            time.sleep(0.5)
    finally:
        squatter.send_signal(signal.SIGTERM)
        squatter.wait(30)
        text = log.read_text()
        seen = [json.loads(line) for line in text.splitlines() if line.startswith("{")]
        # whatever happened, the service must come back for the other tests
        wait_for(
            lambda: service_pid(hub) not in (None, old), 120, "JupyterHub to restart the service"
        )
    requests_seen = [str(s["request"]) for s in seen if "request" in s]
    assert not any(bob_server_token in r for r in requests_seen), "alice got bob's token"
    assert not requests_seen, f"alice's listener received requests: {requests_seen}"
    assert not any("bound" in s for s in seen), f"alice took the service's address: {seen}"
    tries = [s for s in seen if "tries" in s]
    assert tries and int(tries[0]["tries"]) > 10, f"the squatter hardly ran: {seen}"
    assert back, "bob's server could not reach the restarted service"
    cli = hub.run_as("bob", ["jupyter", "cluster", "ls"])
    assert cli.returncode == 0, str(cli)


#: Load the example as JupyterHub would (its ``get_config``), nothing else.
LOAD_EXAMPLE = """
import runpy, sys
from traitlets.config import Config
runpy.run_path(sys.argv[1], init_globals={"get_config": Config})
"""


def test_the_example_never_takes_over_an_existing_account(hub: Hub, tmp_path: Path) -> None:
    """With a record that does not name ``alice`` (who exists: the Hub runs her server),
    the example exits saying what to do, and records nothing; with one that names its
    users, the same load goes through."""
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    record = state / "unix-users"
    record.write_text("")
    run = Path(tempfile.mkdtemp(prefix="jupyter-cluster-hub-", dir="/run"))
    run.chmod(0o755)
    env = {
        "PATH": os.environ["PATH"],
        "JUPYTER_CLUSTER_HUB_DIR": str(state),
        "JUPYTER_CLUSTER_HUB_USERS_FILE": str(record),
        "JUPYTER_CLUSTER_HUB_RUN_DIR": str(run),
    }
    argv = [sys.executable, "-c", LOAD_EXAMPLE, str(EXAMPLE)]
    try:
        refused = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
        assert refused.returncode == 1, (refused.stdout, refused.stderr)
        assert "the Unix user alice exists already and this example did not make it" in (
            refused.stderr
        )
        assert record.read_text() == ""
        record.write_text("\n".join([*USERS, ADMIN]) + "\n")
        loaded = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
        assert loaded.returncode == 0, (loaded.stdout, loaded.stderr)
    finally:
        shutil.rmtree(run, ignore_errors=True)
