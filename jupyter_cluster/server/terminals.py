"""Terminals into the containers of cluster sessions, run by the server's terminal service.

``POST cluster/api/sessions/{id}/containers/{host}/terminals`` creates a terminal
of jupyter_server_terminals' TerminalManager whose shell command enters the
container as ``work``, so JupyterLab's terminal UI and
``/terminals/websocket/{name}`` work unchanged:

- with a local engine, ``main1``: ``docker exec -it -u work <container>`` a login
  shell (``docker -H`` for a remote agent);
- a sub container, and every container in team mode: OpenSSH through main1, as
  the containers themselves do it, with the session's user key and every
  container's host key, strict host-key checking on. The key material lives in a
  0700 directory ``<cluster dir>/ssh/<session id>/``, removed when the session ends.

The engine's route (:mod:`jupyter_cluster.reach`) builds the command line. Each
terminal is named ``cluster_<host>_<session>_<n>``, a name the terminal service
gives no plain terminal (:mod:`.terminal_names`).

Used by the REST handlers; the server extension calls :meth:`close_session`
when a session ends and :meth:`sweep` at start-up.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
from typing import Any

from ..core.models import Session
from ..core.state import USABLE, ContainerStatus
from ..engine.api import Engine
from ..errors import Conflict
from .terminal_names import cluster_terminal_name, creating_cluster_terminal

_LOGIN_SHELL = "if command -v bash >/dev/null 2>&1; then exec bash -l; else exec sh -l; fi"


class ClusterTerminals:
    """Create terminals into session containers and clean up after sessions."""

    def __init__(self, engine: Engine[Any], root: str, log: logging.Logger) -> None:
        self.engine = engine
        self.root = root
        self.log = log
        self._names: dict[str, set[str]] = {}

    def key_dir(self, session_id: str) -> str:
        return os.path.join(self.root, session_id)

    async def create(self, term_manager: Any, session: Session, host: str) -> dict[str, Any]:
        """A new terminal of ``term_manager`` whose shell runs as work in ``host``."""
        container = session.locate(host)
        if session.status not in USABLE:
            raise Conflict(f"session {session.name} is {session.status.value}, not running")
        if container.status is not ContainerStatus.RUNNING or not container.container_id:
            raise Conflict(f"{host} of session {session.name} is {container.status.value}")
        term = str(getattr(term_manager, "term_settings", {}).get("type") or "xterm-256color")
        route = self.engine.main_route()  # docker exec, or SSH through main1
        argv = await route.terminal_argv(session, host, term, self.key_dir(session.id))
        given = self._names.setdefault(session.id, set())
        name = cluster_terminal_name(host, session.id, set(term_manager.terminals) | given)
        with creating_cluster_terminal():
            model: dict[str, Any] = term_manager.create(shell_command=argv, name=name)
        given.add(model["name"])
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
