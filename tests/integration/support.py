"""Helpers of the integration tests: the real Docker engine, no fakes.

Every test (or, for a module-scoped fixture, every module) works in a
:class:`Workspace`: its own ``JUPYTER_DATA_DIR`` and ``JUPYTER_CONFIG_DIR``, hence
its own SQLite store and manager id. The CLI runs as a subprocess
(``python -m jupyter_cluster.cli``) with that environment; the engine is used
in-process through :meth:`Workspace.manager`. What Docker really did is checked
with the ``docker`` command line, independently of the code under test.

When a workspace is finished, every container and network labelled with its
manager id is removed, and the test fails if any was left: sessions must clean up
after themselves. These tests never skip: without Docker they fail.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from jupyter_cluster.core.state import SessionStatus
from jupyter_cluster.engine.manager import ClusterManager
from jupyter_cluster.engine.store import Store

IMAGE = "jupyter-cluster/kernel:latest"
LABEL_MANAGER = "jupyter-cluster.manager-id"
LABEL_SESSION = "jupyter-cluster.session-id"
CLI = (sys.executable, "-m", "jupyter_cluster.cli")
#: Small sessions: the whole suite must run in a few minutes on 2 cores.
SMALL = ("--cpu", "0.25", "--mem", "256m")


@dataclass(frozen=True)
class Result:
    """A finished CLI or docker command."""

    args: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str

    def __str__(self) -> str:
        return (
            f"$ {' '.join(self.args)}\nexit code {self.returncode}\n"
            f"--- stdout\n{self.stdout}--- stderr\n{self.stderr}"
        )


def run(
    args: tuple[str, ...] | list[str],
    *,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    timeout: float = 180,
) -> Result:
    """Run a command to the end and capture its output."""
    proc = subprocess.run(
        list(args), env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout
    )
    return Result(tuple(args), proc.returncode, proc.stdout, proc.stderr)


def docker(*args: str, check: bool = True) -> Result:
    """Run the ``docker`` command line (the independent witness of what exists)."""
    result = run(("docker", *args), timeout=120)
    if check:
        assert result.returncode == 0, str(result)
    return result


def docker_ids(kind: str, label: str) -> list[str]:
    """Ids of containers (``kind='container'``) or networks carrying ``label``."""
    if kind == "container":
        out = docker("ps", "-a", "-q", "--no-trunc", "--filter", f"label={label}").stdout
    else:
        out = docker("network", "ls", "-q", "--no-trunc", "--filter", f"label={label}").stdout
    return out.split()


def session_objects(session_id: str) -> tuple[list[str], list[str]]:
    """Containers and networks Docker has for one session (by its label)."""
    label = f"{LABEL_SESSION}={session_id}"
    return docker_ids("container", label), docker_ids("network", label)


def inspect(*ids: str) -> list[dict[str, Any]]:
    """``docker inspect`` of containers or networks."""
    return json.loads(docker("inspect", *ids).stdout)


def container_exists(container_id: str) -> bool:
    return docker("inspect", container_id, check=False).returncode == 0


def wait_for(predicate: Callable[[], Any], timeout: float, what: str, interval: float = 0.5) -> Any:
    """Poll ``predicate`` until it returns something truthy; fail after ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(interval)


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

    def ok(self, *args: str, timeout: float = 180) -> Result:
        """Like :meth:`cli`, asserting exit code 0."""
        result = self.cli(*args, timeout=timeout)
        assert result.returncode == 0, str(result)
        return result

    def json(self, *args: str) -> Any:
        """Run a command with ``--json`` (must succeed) and parse its output."""
        return json.loads(self.ok(*args, "--json").stdout)

    def launch(self, *args: str) -> dict[str, Any]:
        """``launch ARGS --json``: the session as a dict (asserts success)."""
        return self.json("launch", *args)

    def show(self, ref: str) -> dict[str, Any]:
        return self.json("show", ref)

    def exec(self, ref: str, host: str, *cmd: str) -> Result:
        """``exec REF HOST -- CMD`` (exit code not checked)."""
        return self.cli("exec", ref, host, "--", *cmd)

    def sh(self, ref: str, host: str, script: str) -> str:
        """Run a shell script as work in one container; asserts success, returns stdout."""
        result = self.exec(ref, host, "sh", "-c", script)
        assert result.returncode == 0, str(result)
        return result.stdout

    def write_config(self, text: str) -> None:
        """Write ``jupyter_cluster_config.py`` in this workspace's config dir."""
        (self.config_dir / "jupyter_cluster_config.py").write_text(text)

    # -- the engine in-process -----------------------------------------------------

    def manager(self, **traits: Any) -> ClusterManager:
        """A ClusterManager on this workspace's store and data folders."""
        return ClusterManager(db_path=str(self.db_path), data_root=str(self.folders_root), **traits)

    def store(self) -> Store:
        return Store(self.db_path)

    # -- what Docker has -----------------------------------------------------------

    def docker_objects(self) -> tuple[list[str], list[str]]:
        """Containers and networks labelled with this workspace's manager id."""
        label = f"{LABEL_MANAGER}={self.manager_id}"
        return docker_ids("container", label), docker_ids("network", label)

    def finish(self) -> None:
        """Stop launch drivers, then remove everything of this manager; fail on leaks."""
        self._stop_drivers()
        containers, networks = self.docker_objects()
        for cid in containers:
            docker("rm", "-f", "-v", cid, check=False)
        for nid in networks:
            docker("network", "rm", nid, check=False)
        left = self.docker_objects()
        assert left == ([], []), f"could not remove leaked Docker objects {left}"
        assert not containers and not networks, (
            f"the test left {len(containers)} container(s) and {len(networks)} network(s) "
            f"labelled {LABEL_MANAGER}={self.manager_id} (removed now): "
            f"containers {containers}, networks {networks}"
        )

    def _stop_drivers(self) -> None:
        """Cancel sessions still waiting and end detached drivers a test left running."""
        if not self.db_path.exists():
            return
        store = Store(self.db_path)
        try:
            pids = []
            for session in store.list():
                pid, _host = store.driver(session.id)
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
