"""Terminals into the containers of cluster sessions, run by the server's terminal service.

``POST cluster/api/sessions/{id}/containers/{host}/terminals`` creates a terminal
of jupyter_server_terminals' TerminalManager whose shell command enters the
container as ``work``, so JupyterLab's terminal UI and
``/terminals/websocket/{name}`` work unchanged:

- ``main1``: ``docker exec -it -u work <container>`` a login shell (``docker -H``
  for a remote agent);
- a sub container: OpenSSH through main1, as the containers themselves do it
  (main1's SSH port is the only one published): a ProxyCommand jumps via main1's
  published port, with the session's user key and every container's host key
  from the store, strict host-key checking on. The key material lives in a 0700
  directory ``<cluster dir>/ssh/<session id>/``, removed when the session ends.

Used by the REST handlers; the server extension calls :meth:`close_session`
when a session ends and :meth:`sweep` at start-up.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
from typing import Any

from ..core import naming
from ..core.models import Session
from ..core.ssh_config import MAIN_ALIAS, proxy_config, proxy_known_hosts
from ..core.state import USABLE, ContainerStatus
from ..engine.manager import ClusterManager
from ..errors import AgentError, Conflict

_LOGIN_SHELL = "if command -v bash >/dev/null 2>&1; then exec bash -l; else exec sh -l; fi"


class ClusterTerminals:
    """Create terminals into session containers and clean up after sessions."""

    def __init__(self, manager: ClusterManager, root: str, log: logging.Logger) -> None:
        self.manager = manager
        self.root = root
        self.log = log
        self._names: dict[str, set[str]] = {}

    def key_dir(self, session_id: str) -> str:
        return os.path.join(self.root, session_id)

    def _write(self, path: str, text: str) -> None:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(text)

    async def ssh_command(self, session: Session, host: str) -> list[str]:
        """``ssh`` into ``host`` through main1, writing the key material first."""
        ssh = shutil.which("ssh")
        if ssh is None:
            raise AgentError(
                "the OpenSSH client (ssh) is not installed on the server; install "
                "openssh-client to open terminals in sub containers"
            )
        access = await self.manager.access(session.id)
        keys, address, port = access.keys, access.address, access.port
        subs = [c.host for c in session.containers if c.role != "main"]
        key_dir = self.key_dir(session.id)
        os.makedirs(self.root, mode=0o700, exist_ok=True)
        os.makedirs(key_dir, mode=0o700, exist_ok=True)
        os.chmod(key_dir, 0o700)
        self._write(os.path.join(key_dir, "id_cluster"), keys["user"])
        self._write(os.path.join(key_dir, "known_hosts"), proxy_known_hosts(keys, subs))
        self._write(
            os.path.join(key_dir, "config"), proxy_config(key_dir, address, port, subs, ssh)
        )
        return [ssh, "-F", os.path.join(key_dir, "config"), "-t", host]

    def docker_command(self, session: Session, host: str, term: str) -> list[str]:
        """``docker exec -it -u work`` a login shell in ``host``'s container."""
        docker = shutil.which("docker")
        if docker is None:
            raise AgentError("the docker command is not installed on the server")
        container = session.container(host)
        assert container is not None and container.container_id
        agent = self.manager.agent(container.agent or "")
        cmd = [docker, *agent.config.docker_cli_flags()]
        return [
            *cmd,
            "exec",
            "-it",
            "-u",
            naming.WORK_USER,
            "-w",
            naming.WORK_HOME,
            *(f"-e{k}={v}" for k, v in naming.container_env(session, container).items()),
            "-e",
            f"TERM={term}",
            container.container_id,
            "/bin/sh",
            "-c",
            _LOGIN_SHELL,
        ]

    async def create(self, term_manager: Any, session: Session, host: str) -> dict[str, Any]:
        """A new terminal of ``term_manager`` whose shell runs as work in ``host``."""
        container = session.locate(host)
        if session.status not in USABLE:
            raise Conflict(f"session {session.name} is {session.status.value}, not running")
        if container.status is not ContainerStatus.RUNNING or not container.container_id:
            raise Conflict(f"{host} of session {session.name} is {container.status.value}")
        term = str(getattr(term_manager, "term_settings", {}).get("type") or "xterm-256color")
        if container.role == "main" and not self.manager.remote:
            argv = self.docker_command(session, host, term)
        else:  # a sub, or any container from a user's server in team mode (no Docker)
            argv = await self.ssh_command(session, MAIN_ALIAS if host == "main1" else host)
        model: dict[str, Any] = term_manager.create(shell_command=argv)
        self._names.setdefault(session.id, set()).add(model["name"])
        self.log.info("terminal %s: %s of session %s", model["name"], host, session.name)
        return model

    def names(self, session_id: str) -> set[str]:
        """The terminals made here into ``session_id``'s containers (open or not)."""
        return set(self._names.get(session_id, ()))

    async def close_session(
        self, term_manager: Any, session_id: str, *, remove_keys: bool = True
    ) -> None:
        """End the session's terminals and (unless told not to) remove its key material."""
        for name in sorted(self._names.pop(session_id, ())):
            if term_manager is not None and name in term_manager.terminals:
                with contextlib.suppress(Exception):
                    await term_manager.terminate(name, force=True)
        if remove_keys:
            shutil.rmtree(self.key_dir(session_id), ignore_errors=True)

    async def close_all(self, term_manager: Any) -> None:
        """End every terminal made here (the server stops; sessions and keys stay)."""
        for session_id in list(self._names):
            await self.close_session(term_manager, session_id, remove_keys=False)

    def sweep(self, active: set[str]) -> None:
        """Remove key material of sessions that are no longer active."""
        with contextlib.suppress(FileNotFoundError):
            for entry in os.listdir(self.root):
                if entry not in active:
                    shutil.rmtree(os.path.join(self.root, entry), ignore_errors=True)
