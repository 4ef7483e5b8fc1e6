"""The JupyterLab extension end to end: a real ``jupyter lab``, Docker and headless Chromium.

The extension must be installed the way ``pip install`` installs it (prebuilt, in
``share/jupyter/labextensions/jupyter-cluster``) and the server extension enabled by
its config file. A ``jupyter lab`` runs on 127.0.0.1 with a token, in temporary
Jupyter data, config, runtime, settings and workspace directories; the node script
``lab_e2e.js`` (playwright-core driving Debian's chromium) clicks through it: the
launcher tile, the launch dialog (size 3), a notebook on the session's kernel, the
log panel, a terminal in ``sub1``, a session that must wait (PENDING), the palette,
the dark theme and terminate. Screenshots and ``results.json`` are written to
``test-artifacts/browser/`` (or ``$JUPYTER_CLUSTER_ARTIFACTS/browser``).

Needs Docker, the kernel image, chromium, node and ``labextension/node_modules``
(``make setup``): the test fails, never skips, without them. Every container and
network of the server's sessions must be gone at the end.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.support.constants import BIN, READY, REPO
from tests.support.docker import assert_nothing_left, remove_leftovers
from tests.support.processes import free_port

pytestmark = pytest.mark.docker

SCRIPT = Path(__file__).with_name("lab_e2e.js")
NODE_MODULES = REPO / "labextension" / "node_modules"
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
ARTIFACTS = Path(os.environ.get("JUPYTER_CLUSTER_ARTIFACTS") or REPO / "test-artifacts") / "browser"
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _jupyter(*args: str, env: dict[str, str] | None = None) -> str:
    """Output (stdout and stderr, without colours) of ``jupyter …`` from this venv."""
    done = subprocess.run(
        [str(BIN / "jupyter"), *args], capture_output=True, text=True, timeout=120, env=env
    )
    return ANSI.sub("", done.stdout + done.stderr)


@pytest.fixture(scope="module", autouse=True)
def prerequisites(docker_engine: None) -> None:
    """Docker, the image (``docker_engine``), chromium, node and playwright-core: fail
    (never skip) if missing."""
    problems = []
    if not os.access(CHROMIUM, os.X_OK):
        problems.append(f"no chromium at {CHROMIUM} (apt-get install chromium, or make setup)")
    if shutil.which("node") is None:
        problems.append("node is not installed")
    if not (NODE_MODULES / "playwright-core").is_dir():
        problems.append(
            "labextension/node_modules has no playwright-core (cd labextension && jlpm)"
        )
    if problems:
        pytest.fail("the browser test cannot run: " + "; ".join(problems))


def test_extensions_installed_and_enabled() -> None:
    """pip install put the prebuilt labextension in place and enabled the server extension."""
    labext = _jupyter("labextension", "list")
    line = next((x for x in labext.splitlines() if "jupyter-cluster" in x), "")
    assert re.search(r"jupyter-cluster v\S+ enabled\s+OK", line), labext
    assert "(python, jupyter_cluster)" in line, line
    prefix = Path(sys.prefix) / "share" / "jupyter" / "labextensions" / "jupyter-cluster"
    assert (prefix / "static" / "style.js").is_file()
    assert (prefix / "schemas" / "jupyter-cluster" / "plugin.json").is_file()
    server = _jupyter("server", "extension", "list")
    assert re.search(r"jupyter_cluster enabled", server), server
    assert re.search(r"jupyter_cluster \S+ OK", server), server


@dataclass
class Lab:
    """A running ``jupyter lab`` and where it keeps its state."""

    url: str
    token: str
    process: subprocess.Popen[bytes]
    data_dir: Path
    log: Path

    def api(self, method: str, route: str) -> Any:
        request = urllib.request.Request(
            f"{self.url}cluster/api/{route}",
            method=method,
            headers={"Authorization": f"token {self.token}"},
        )
        with urllib.request.urlopen(request, timeout=120) as response:
            body = response.read()
        return json.loads(body) if body else None


def _settings(directory: Path) -> None:
    """JupyterLab settings of the test: readable terminals, no news prompt."""
    for plugin, values in {
        "terminal-extension/plugin": {"screenReaderMode": True},
        "apputils-extension/notification": {"fetchNews": "false", "checkForUpdates": False},
    }.items():
        path = directory / "@jupyterlab" / f"{plugin}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    """``jupyter lab`` on 127.0.0.1 with a token, in temporary Jupyter directories."""
    base = tmp_path_factory.mktemp("lab")
    dirs = {name: base / name for name in ("data", "config", "runtime", "settings", "ws", "root")}
    for path in dirs.values():
        path.mkdir()
    _settings(dirs["settings"])
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    port, token = free_port(), secrets.token_hex(16)
    env = {
        **os.environ,
        "JUPYTER_DATA_DIR": str(dirs["data"]),
        "JUPYTER_CONFIG_DIR": str(dirs["config"]),
        "JUPYTER_RUNTIME_DIR": str(dirs["runtime"]),
        "JUPYTERLAB_SETTINGS_DIR": str(dirs["settings"]),
        "JUPYTERLAB_WORKSPACES_DIR": str(dirs["ws"]),
    }
    log = ARTIFACTS / "jupyter-lab.log"
    with open(log, "wb") as out:
        process = subprocess.Popen(
            [
                str(BIN / "jupyter"),
                "lab",
                "--no-browser",
                "--allow-root",
                "--ServerApp.ip=127.0.0.1",
                f"--ServerApp.port={port}",
                "--ServerApp.port_retries=0",
                f"--IdentityProvider.token={token}",
                f"--ServerApp.root_dir={dirs['root']}",
                "--LabApp.expose_app_in_browser=True",
                "--ClusterApp.events_poll_interval=0.2",
                # e.g. --debug, to see every request when a run needs explaining
                *os.environ.get("JUPYTER_CLUSTER_E2E_LAB_ARGS", "").split(),
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
        )
    running = Lab(f"http://127.0.0.1:{port}/", token, process, dirs["data"], log)
    try:
        _wait_until_up(running)
        yield running
    finally:
        _stop(running)


def _wait_until_up(lab: Lab) -> None:
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if lab.process.poll() is not None:
            pytest.fail(f"jupyter lab exited ({lab.process.returncode}); see {lab.log}")
        try:
            lab.api("GET", "launch-options")
            return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            time.sleep(0.5)
    pytest.fail(f"jupyter lab did not answer within 90 s; see {lab.log}")


def _stop(lab: Lab) -> None:
    """Terminate what is still active (a failed run), then stop the server."""
    if lab.process.poll() is None:
        try:
            history = lab.api("GET", "sessions?all=1")
            (ARTIFACTS / "sessions.json").write_text(json.dumps(history, indent=1))
            for session in lab.api("GET", "sessions"):
                lab.api("DELETE", f"sessions/{session['id']}")
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        lab.process.send_signal(signal.SIGTERM)
        try:
            lab.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(lab.process.pid, signal.SIGKILL)
            lab.process.wait(timeout=30)


def _assert_nothing_left(lab: Lab) -> None:
    """No container or network of this server's manager is left (removed if there are)."""
    from jupyter_cluster.engine.store import Store

    db = lab.data_dir / "cluster" / "cluster.db"
    if db.exists():
        manager_id = Store(db).manager_id
        assert_nothing_left(manager_id, *remove_leftovers(manager_id))


def test_lab_end_to_end(lab: Lab) -> None:
    """Launch size 3 from the launcher, use it (notebook, logs, terminal), terminate it."""
    for old in ARTIFACTS.glob("*.png"):
        old.unlink()
    (ARTIFACTS / "results.json").unlink(missing_ok=True)
    env = {
        **os.environ,
        "LAB_URL": lab.url,
        "LAB_TOKEN": lab.token,
        "ARTIFACTS": str(ARTIFACTS),
        "CHROMIUM": CHROMIUM,
    }
    try:
        done = subprocess.run(
            ["node", str(SCRIPT)],
            capture_output=True,
            text=True,
            timeout=600,
            env=env,
            cwd=REPO,
        )
        output = done.stdout + done.stderr
    except subprocess.TimeoutExpired as exc:
        output = f"{exc.stdout or ''}{exc.stderr or ''}\nnode timed out after 600 s"
    (ARTIFACTS / "node.log").write_text(output)
    print(output)
    results_file = ARTIFACTS / "results.json"
    assert results_file.exists(), f"the browser script wrote no results:\n{output}"
    results = json.loads(results_file.read_text())

    # Nothing may be left, whatever happened in the browser.
    _stop(lab)
    _assert_nothing_left(lab)

    failed = [s for s in results["steps"] if not s["ok"]]
    assert results["ok"] and not failed, f"{failed or results.get('error')}\n{output}"
    session, pending = results["sessionId"], results["pendingId"]
    seen = results["statuses"]
    assert seen[session][:2] == ["PREPARING", "RUNNING"], seen
    assert seen[session][-1].startswith("TERMINATED"), seen
    assert seen[pending][0].startswith("PENDING: waiting for"), seen
    assert seen[pending][-1].startswith("CANCELLED"), seen
    notes = "\n".join(results["notifications"])
    assert "is PREPARING: 0 of 3 containers running" in notes, notes
    assert "is RUNNING; its kernel runs in main1" in notes, notes
    assert "is PENDING: waiting for" in notes, notes

    outputs = results["outputs"]
    assert "HOSTS=main1,sub1,sub2" in outputs["notebook"], outputs
    assert "sub2" in outputs["notebook"].split(), outputs
    assert "HOST=sub1 USER=work" in outputs["terminal"], outputs
    assert READY in outputs["logs"], outputs
    assert re.fullmatch(r"\d+ of \d+", outputs["logSearch"]), outputs
    download = ARTIFACTS / outputs["logDownload"]
    assert outputs["logDownload"].endswith("-sub1.log") and download.is_file()
    assert READY in download.read_text()
    assert results["remainingSessions"] == [], results["remainingSessions"]
    cluster_errors = [e for e in results["consoleErrors"] if "cluster" in e.lower()]
    assert not cluster_errors, cluster_errors
    for name in (
        "launcher",
        "launch-dialog-size3",
        "notebook-outputs",
        "logs-sub1",
        "terminal-sub1",
        "sidebar-pending",
        "dark-launch-dialog",
        "terminated",
    ):
        assert any(name in shot for shot in results["screenshots"]), name
