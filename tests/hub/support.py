"""The :class:`Hub` the ``hub`` fixture yields: a running JupyterHub and how to drive it.

The Hub is ``examples/team/jupyterhub_config.py`` (see :mod:`.launch` for what the
tests change in it). The tests drive it as the ``test-admin`` service (a known
token with the scopes of :data:`TEST_ADMIN_SCOPES`), reach users' servers through
the proxy, call the cluster service on its Unix socket as users' servers do
(:meth:`Hub.service_call`), and run commands as the Hub's Unix users the way a
terminal in their server would (:meth:`Hub.run_as`). The functions at the end (:func:`launch`,
:func:`wait_running`, :func:`end_sessions`, …) drive sessions through a user's own
server.
"""

from __future__ import annotations

import os
import pwd
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import httpx
import requests

from tests.support.constants import API, BIN, START_TIMEOUT
from tests.support.processes import Result, run
from tests.support.waiting import wait_for

#: The Hub's users as the example defines them (``clusteradmin`` is a Hub admin).
USERS = ("alice", "bob")
ADMIN = "clusteradmin"
#: The name of the cluster service and the scope a token needs to call it.
SERVICE = "cluster"
SERVICE_SCOPE = f"access:services!service={SERVICE}"
#: The test driver: a service the tests add to the example, and its role's scopes.
TEST_ADMIN = "test-admin"
TEST_ADMIN_SCOPES = [
    "admin:users",
    "admin:servers",
    "admin:server_state",  # the servers' pids (LocalProcessSpawner state)
    "admin:groups",
    "tokens",
    "list:users",
    "read:users",
    "read:servers",
    "read:roles",
    "list:services",
    "read:services",
    "access:servers",
    "access:services",
]
#: PATH of a user's server (the example's ``c.Spawner.environment``) and of run_as.
USER_PATH = f"{BIN}:/usr/local/bin:/usr/bin:/bin"


def ok(response: Any, *codes: int) -> Any:
    """``response``, asserting that its status is one of ``codes`` (default: any 2xx)."""
    good = response.status_code in codes if codes else 200 <= response.status_code < 300
    assert good, (
        f"{response.request.method} {response.url} answered {response.status_code}: "
        f"{response.text[:2000]}"
    )
    return response


@dataclass
class Hub:
    """A running JupyterHub of the team example, driven as :data:`TEST_ADMIN`."""

    #: The public URL (the proxy), e.g. ``http://127.0.0.1:PORT`` (no trailing slash).
    url: str
    #: The cluster service's URL as users' servers get it (``JUPYTER_CLUSTER_SERVICE_URL``):
    #: ``http+unix://<its socket>/services/cluster/``.
    service_url: str
    #: The Hub's REST API as servers and services reach it (``JUPYTERHUB_API_URL``).
    api_url: str
    #: The token of :data:`TEST_ADMIN`.
    admin_token: str
    #: Where the Hub and the service keep their state (root's only), and the Hub's log.
    state: Path
    log: Path
    #: The users' log-in passwords (their Unix passwords, set by :mod:`.accounts`).
    passwords: dict[str, str] = field(default_factory=dict)
    #: Per-user tokens made for :meth:`run_as`.
    _cli_tokens: dict[str, str] = field(default_factory=dict)

    # -- the cluster service --------------------------------------------------------------

    @property
    def service_socket(self) -> Path:
        """The Unix socket the service listens on (from :attr:`service_url`)."""
        return Path(unquote(urlparse(self.service_url).netloc))

    def service_call(
        self, method: str, path: str, token: str | None = None, **kw: Any
    ) -> httpx.Response:
        """Call ``path`` (relative to ``/services/cluster/``) of the service itself on its
        socket, with ``Authorization: token {token}`` unless None; ``kw`` goes to httpx.
        Redirects are followed, and a raw ``data=`` body is sent, as
        :func:`requests.request` does (httpx calls that ``content``)."""
        if isinstance(kw.get("data"), (bytes, str)):
            kw["content"] = kw.pop("data")
        headers = {"Authorization": f"token {token}"} if token else {}
        headers.update(kw.pop("headers", {}))
        kw.setdefault("follow_redirects", True)
        url = f"http://localhost{urlparse(self.service_url).path}{path.lstrip('/')}"
        transport = httpx.HTTPTransport(uds=str(self.service_socket))
        with httpx.Client(transport=transport, timeout=30) as client:
            return client.request(method, url, headers=headers, **kw)

    # -- the Hub's REST API --------------------------------------------------------------

    def api(self, method: str, path: str, **kw: Any) -> requests.Response:
        """Call ``/hub/api/{path}`` through the proxy as :data:`TEST_ADMIN`; ``kw`` goes to
        :func:`requests.request` (``json=``, ``params=``, ``headers=`` added to ours)."""
        headers = {"Authorization": f"token {self.admin_token}", **kw.pop("headers", {})}
        url = f"{self.url}/hub/api/{path.lstrip('/')}"
        return requests.request(method, url, headers=headers, timeout=30, **kw)

    def token(self, user: str, scopes: list[str] | None = None) -> str:
        """A fresh API token of ``user``: with ``scopes``, or (``None``) all the user's
        permissions (JupyterHub's default for a new token)."""
        body: dict[str, Any] = {"note": "tests/hub"}
        if scopes is not None:
            body["scopes"] = scopes
        return str(ok(self.api("POST", f"users/{user}/tokens", json=body)).json()["token"])

    def user_model(self, user: str) -> dict[str, Any]:
        """``GET /hub/api/users/{user}`` (with the servers' state, so their pids)."""
        return dict(ok(self.api("GET", f"users/{user}")).json())

    # -- users' servers -------------------------------------------------------------------

    def server_base(self, user: str, name: str = "") -> str:
        """A server's base URL through the proxy (``…/user/alice/`` or ``…/user/alice/NAME/``)."""
        return f"{self.url}/user/{user}/" + (f"{name}/" if name else "")

    def _server_path(self, user: str, name: str) -> str:
        return f"users/{user}/servers/{name}" if name else f"users/{user}/server"

    def server_pid(self, user: str, name: str = "") -> int | None:
        """The pid of a running server's ``jupyterhub-singleuser`` process, or None."""
        server = self.user_model(user).get("servers", {}).get(name)
        pid = (server or {}).get("state", {}).get("pid")
        return int(pid) if pid else None

    def start_server(self, user: str, name: str = "") -> str:
        """Spawn ``user``'s server (``name``: a named one), wait until it answers through
        the proxy; its base URL (:meth:`server_base`). Already running is fine."""
        reply = self.api("POST", self._server_path(user, name))
        busy = ("already running", "is pending spawn")
        if not (reply.status_code == 400 and any(b in reply.text for b in busy)):
            ok(reply, 201, 202)

        def ready() -> bool:
            server = self.user_model(user).get("servers", {}).get(name) or {}
            return bool(server.get("ready"))

        what = f"the server {user}/{name} to be ready (log: {self.log})"
        wait_for(ready, START_TIMEOUT, what, seen=lambda: self.user_model(user).get("servers"))
        base = self.server_base(user, name)

        def answers() -> bool:
            return self.server_call(user, "GET", "api/status", self.admin_token, name).ok

        wait_for(answers, 60, f"{base}api/status to answer through the proxy")
        return base

    def stop_server(self, user: str, name: str = "") -> None:
        """Stop ``user``'s server (a named one stays defined); wait until it is gone and
        its process has exited."""
        pid = self.server_pid(user, name)
        ok(self.api("DELETE", self._server_path(user, name)), 202, 204)

        def gone() -> bool:
            servers = self.user_model(user).get("servers", {})
            return name not in servers and (pid is None or not Path(f"/proc/{pid}").exists())

        wait_for(gone, 60, f"the server {user}/{name} to stop")

    def server_call(
        self,
        user: str,
        method: str,
        path: str,
        token: str,
        name: str = "",
        **kw: Any,
    ) -> requests.Response:
        """Call ``path`` (relative, e.g. ``api/status``) of ``user``'s server through the
        proxy with ``Authorization: token {token}``; ``kw`` goes to requests."""
        headers = {"Authorization": f"token {token}", **kw.pop("headers", {})}
        url = self.server_base(user, name) + path.lstrip("/")
        kw.setdefault("timeout", 30)
        return requests.request(method, url, headers=headers, **kw)

    def server_token(self, user: str, server_name: str = "") -> str:
        """The ``JUPYTERHUB_API_TOKEN`` of a running server, read (as root) from its
        process's environment: what the server itself holds."""
        pid = self.server_pid(user, server_name)
        assert pid, f"the server {user}/{server_name} is not running"
        return process_env(pid)["JUPYTERHUB_API_TOKEN"]

    # -- commands as a Hub user -----------------------------------------------------------

    def user_env(self, user: str) -> dict[str, str]:
        """The environment :meth:`run_as` gives ``user``'s commands: a user's server's
        (``HOME``, ``PATH`` with the venv, the Hub's API, the service's URL) with a token
        of that user holding :data:`SERVICE_SCOPE` (made once per user)."""
        entry = pwd.getpwnam(user)
        if user not in self._cli_tokens:
            self._cli_tokens[user] = self.token(user, [SERVICE_SCOPE])
        return {
            "HOME": entry.pw_dir,
            "USER": user,
            "LOGNAME": user,
            "SHELL": entry.pw_shell or "/bin/sh",
            "PATH": USER_PATH,
            "LANG": os.environ.get("LANG", "C.UTF-8"),
            "JUPYTERHUB_API_TOKEN": self._cli_tokens[user],
            "JUPYTERHUB_API_URL": self.api_url,
            "JUPYTERHUB_USER": user,
            "JUPYTER_CLUSTER_SERVICE_URL": self.service_url,
        }

    def run_as(
        self,
        user: str,
        argv: list[str] | tuple[str, ...],
        env: dict[str, str] | None = None,
        timeout: float = 180,
    ) -> Result:
        """Run ``argv`` to the end as the Unix user ``user`` (its uid, gid and groups, via
        ``setpriv``) in its home, with :meth:`user_env` updated by ``env``."""
        entry = pwd.getpwnam(user)
        full = {**self.user_env(user), **(env or {})}
        ids = (f"--reuid={entry.pw_uid}", f"--regid={entry.pw_gid}", "--init-groups")
        return run(
            ("setpriv", *ids, "--", *argv), env=full, cwd=Path(entry.pw_dir), timeout=timeout
        )


def process_env(pid: int) -> dict[str, str]:
    """The environment of process ``pid`` (as root: any process)."""
    raw = Path(f"/proc/{pid}/environ").read_bytes()
    pairs = (item.partition(b"=") for item in raw.split(b"\0") if item)
    return {k.decode(errors="replace"): v.decode(errors="replace") for k, _, v in pairs}


# -- sessions through a user's own server ---------------------------------------------------


def launch(hub: Hub, user: str, token: str, body: dict[str, Any], name: str = "") -> Any:
    """POST sessions through ``user``'s own server; the new session's model."""
    reply = hub.server_call(user, "POST", f"{API}/sessions", token, name, json=body)
    return ok(reply, 201).json()


def status(hub: Hub, user: str, token: str, sid: str) -> Any:
    """GET the session through ``user``'s own server; its model."""
    return ok(hub.server_call(user, "GET", f"{API}/sessions/{sid}", token)).json()


def wait_running(hub: Hub, user: str, token: str, sid: str, interval: float = 0.5) -> Any:
    """Wait until the session is RUNNING (fail at once if it fails), asking every
    ``interval`` seconds."""
    seen: dict[str, Any] = {}

    def running() -> bool:
        seen.update(status(hub, user, token, sid))
        assert seen["status"] not in ("ERROR", "CANCELLED", "TERMINATED"), seen
        return bool(seen["status"] == "RUNNING")

    wait_for(running, 180, f"session {sid} to run", interval=interval, seen=lambda: seen)
    return seen


def active_sessions(hub: Hub, user: str, token: str) -> list[dict[str, Any]]:
    """``user``'s active sessions, listed through their own server."""
    return list(ok(hub.server_call(user, "GET", f"{API}/sessions", token)).json())


def end_sessions(hub: Hub, user: str, token: str) -> list[str]:
    """Terminate every active session of ``user`` and wait until none is left; what was
    left (``ID STATUS`` of each)."""
    left = active_sessions(hub, user, token)
    for session in left:
        hub.server_call(user, "DELETE", f"{API}/sessions/{session['id']}", token)
    wait_for(lambda: not active_sessions(hub, user, token), 120, f"{user}'s sessions to end")
    return [f"{s['id']} {s['status']}" for s in left]
