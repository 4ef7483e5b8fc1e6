"""Helpers of the integration tests: the real Docker engine, no fakes.

Every test (or, for a module-scoped fixture, every module) works in a
:class:`Workspace`: its own ``JUPYTER_DATA_DIR`` and ``JUPYTER_CONFIG_DIR``, hence
its own SQLite store and manager id. The CLI runs as a subprocess
(``python -m jupyter_cluster.cli``) with that environment; the engine is used
in-process through :meth:`Workspace.manager`. What Docker really did is checked
with :mod:`tests.support.docker`, independently of the code under test.

When a workspace is finished, every container and network labelled with its
manager id is removed, and the test fails if any was left: sessions must clean up
after themselves. These tests never skip: without Docker they fail.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from jupyter_cluster.core.state import SessionStatus
from jupyter_cluster.engine.manager import ClusterManager
from jupyter_cluster.engine.store.sessions import Store
from tests.support.constants import CLI
from tests.support.docker import assert_nothing_left, manager_objects, remove_leftovers
from tests.support.processes import Result, alive, run
from tests.support.waiting import wait_for


def _is_our_driver(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return b"jupyter_cluster.cli.driver" in f.read()
    except OSError:
        return False


class Workspace:
    """A private Jupyter data/config dir, its store, and helpers to drive the CLI."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.data_dir = root / "data"
        self.config_dir = root / "config"
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.config_dir.mkdir(parents=True, exist_ok=True)
        self.cluster_dir = self.data_dir / "cluster"
        self.db_path = self.cluster_dir / "cluster.db"
        self.folders_root = self.cluster_dir / "folders"
        env = {k: v for k, v in os.environ.items() if not k.startswith("JUPYTER")}
        env.update(
            JUPYTER_DATA_DIR=str(self.data_dir),
            JUPYTER_CONFIG_DIR=str(self.config_dir),
            JUPYTER_RUNTIME_DIR=str(root / "runtime"),
            JUPYTER_PLATFORM_DIRS="0",
            PYTHONUNBUFFERED="1",
        )
        self.env = env
        store = Store(self.db_path)  # creates the store, so the manager id is known now
        self.manager_id = store.manager_id
        store.close()

    # -- the CLI -----------------------------------------------------------------

    def cli(self, *args: str, timeout: float = 180) -> Result:
        """``jupyter cluster ARGS`` in this workspace; returns whatever happened."""
        return run((*CLI, *args), env=self.env, cwd=self.root, timeout=timeout)

    def ok_cli(self, *args: str, timeout: float = 180) -> Result:
        """Like :meth:`cli`, asserting exit code 0."""
        result = self.cli(*args, timeout=timeout)
        assert result.returncode == 0, str(result)
        return result

    def json(self, *args: str) -> Any:
        """Run a command with ``--json`` (must succeed) and parse its output."""
        return json.loads(self.ok_cli(*args, "--json").stdout)

    def launch(self, *args: str) -> dict[str, Any]:
        """``launch ARGS --json``: the session as a dict (asserts success)."""
        return self.json("launch", *args)

    def show(self, ref: str) -> dict[str, Any]:
        """``show REF --json``: the session as a dict (asserts success)."""
        return self.json("show", ref)

    def exec(self, ref: str, host: str, *cmd: str) -> Result:
        """``exec REF HOST -- CMD`` (exit code not checked)."""
        return self.cli("exec", ref, host, "--", *cmd)

    def sh(self, ref: str, host: str, script: str) -> str:
        """Run a shell script as work in one container; asserts success, returns stdout."""
        result = self.exec(ref, host, "sh", "-c", script)
        assert result.returncode == 0, str(result)
        return result.stdout

    def popen(self, *argv: str, stdin: bool = False) -> subprocess.Popen[str]:
        """Start ``argv`` in this workspace (its environment, in its root), stdout and
        stderr piped as text (stdin too, with ``stdin``); the caller waits for it."""
        return subprocess.Popen(
            argv,
            env=self.env,
            cwd=self.root,
            stdin=subprocess.PIPE if stdin else None,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def install_kernelspec(self, monkeypatch: pytest.MonkeyPatch, name: str, *args: str) -> str:
        """``jupyter cluster kernelspec install NAME ARGS --prefix`` under the workspace,
        found through ``JUPYTER_PATH`` (in this process and the workspace's commands)."""
        prefix = self.root / "prefix"
        self.env["JUPYTER_PATH"] = str(prefix / "share" / "jupyter")
        monkeypatch.setenv("JUPYTER_PATH", self.env["JUPYTER_PATH"])
        result = self.ok_cli("kernelspec", "install", name, *args, "--prefix", str(prefix))
        assert f"installed kernelspec {name}" in result.stdout, str(result)
        return name

    def write_config(self, text: str) -> None:
        """Write ``jupyter_cluster_config.py`` in this workspace's config dir."""
        (self.config_dir / "jupyter_cluster_config.py").write_text(text)

    # -- the engine in-process -----------------------------------------------------

    def manager(self, **traits: Any) -> ClusterManager:
        """A ClusterManager on this workspace's store and data folders."""
        return ClusterManager(db_path=str(self.db_path), data_root=str(self.folders_root), **traits)

    def store(self) -> Store:
        """This workspace's store (the caller closes it)."""
        return Store(self.db_path)

    def driver_pid(self, session_id: str) -> int | None:
        """The pid of the session's detached launch driver, per the store."""
        store = self.store()
        try:
            driver = store.driver(session_id)
            return driver.pid if driver else None
        finally:
            store.close()

    # -- what Docker has -----------------------------------------------------------

    def only_session(self) -> Any:
        """The workspace's one session as the store has it (no reconciliation), or None."""
        store = self.store()
        try:
            sessions = store.list(include_ended=True)
            return sessions[0] if sessions else None
        finally:
            store.close()

    def launch_then_kill_cli(self, *launch_args: str) -> Any:
        """Run ``launch`` with ``launch_args`` and SIGKILL the CLI as soon as a driver
        of its own has the session; that session (the job must outlive its client)."""
        launch = self.popen(*CLI, "launch", *launch_args)
        try:
            # submit records the CLI itself as the driver first; the hand-off follows
            found = wait_for(
                lambda: (
                    (s := self.only_session()) is not None
                    and self.driver_pid(s.id) not in (None, launch.pid)
                    and s
                ),
                60,
                "the launch to hand its session to a driver",
            )
        finally:
            launch.kill()
            launch.communicate(timeout=30)
        assert launch.returncode == -signal.SIGKILL
        driver = self.driver_pid(found.id)
        assert driver and driver != launch.pid and alive(driver)
        return found

    def docker_objects(self) -> tuple[list[str], list[str]]:
        """Containers and networks labelled with this workspace's manager id."""
        return manager_objects(self.manager_id)

    def finish(self) -> None:
        """Stop launch drivers, then remove everything of this manager; fail on leaks."""
        self._stop_drivers()
        containers, networks = remove_leftovers(self.manager_id)
        left = self.docker_objects()
        assert left == ([], []), f"could not remove leaked Docker objects {left}"
        assert_nothing_left(self.manager_id, containers, networks)

    def _stop_drivers(self) -> None:
        """Cancel sessions still waiting and end detached drivers a test left running."""
        if not self.db_path.exists():
            return
        store = Store(self.db_path)
        try:
            pids = []
            for session in store.list():
                driver = store.driver(session.id)
                pid = driver.pid if driver else None
                if session.status is SessionStatus.PENDING:
                    store.set_status(session.id, SessionStatus.CANCELLED, "test clean-up")
                if pid and _is_our_driver(pid):
                    pids.append(pid)
        finally:
            store.close()
        deadline = time.monotonic() + 10
        for pid in pids:
            while _is_our_driver(pid) and time.monotonic() < deadline:
                time.sleep(0.2)
            if _is_our_driver(pid):
                os.kill(pid, signal.SIGTERM)
