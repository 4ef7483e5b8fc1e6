"""The JupyterLab extension end to end: a real ``jupyter lab``, Docker and headless Chromium.

The extension must be installed the way ``pip install`` installs it (prebuilt, in
``share/jupyter/labextensions/jupyter-cluster``) and the server extension enabled by
its config file. A ``jupyter lab`` runs on 127.0.0.1 with a token and the options
``make lab`` gives it (the adaptive warm pool, read from the Makefile), in temporary
Jupyter data, config, runtime, settings and workspace directories; the node script
``lab_e2e.js`` (playwright-core driving Debian's chromium) clicks through it: the
launcher tile, the launch dialog (size 3), a notebook on the session's kernel, the
log panel, a terminal in ``sub1``, a session that must wait (PENDING), the palette,
the dark theme and terminate; with the live usage graphs of the running session,
sub1's log kept after it ended, and a size-2 session's terminal tabs in every
container. Screenshots and ``results.json`` are written to ``test-artifacts/browser/``
(or ``$JUPYTER_CLUSTER_ARTIFACTS/browser``).

Needs Docker, the kernel image, chromium, node and ``labextension/node_modules``
(``make setup``): the test fails, never skips, without them. Every container and
network of the server's sessions must be gone at the end.
"""

from __future__ import annotations

import json
import os
import re
import secrets
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

from tests.support.constants import BIN, READY
from tests.support.docker import assert_nothing_left, remove_leftovers
from tests.support.lab import (
    ARTIFACTS_ROOT,
    LAB_ARGS,
    assert_results,
    browser_problems,
    make_lab_kernelspec,
    make_lab_options,
    run_script,
    write_lab_settings,
)
from tests.support.processes import free_port

pytestmark = pytest.mark.docker

ARTIFACTS = ARTIFACTS_ROOT / "browser"
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
    problems = browser_problems()
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


@pytest.fixture(scope="module")
def lab(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    """``jupyter lab`` on 127.0.0.1 with a token, in temporary Jupyter directories,
    with the options ``make lab`` gives it (the adaptive warm pool). Its log is
    ``jupyter-lab-MODULE.log`` in the artifacts: each test module has its own Lab."""
    base = tmp_path_factory.mktemp("lab")
    dirs = {name: base / name for name in ("data", "config", "runtime", "settings", "ws", "root")}
    for path in dirs.values():
        path.mkdir()
    write_lab_settings(dirs["settings"])
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
    install_make_lab_kernelspec(env)
    log = ARTIFACTS / f"jupyter-lab-{request.module.__name__.rsplit('.', 1)[-1]}.log"
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
                *LAB_ARGS,
                *make_lab_options(),  # what `make lab` gives a new user's Lab
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


def install_make_lab_kernelspec(env: dict[str, str]) -> None:
    """Install the kernelspec ``make lab`` installs (``cluster2``, the README's "Cluster"
    kernel), with the Makefile's own command, but in this Lab's data directory
    (``--user`` with ``env``'s ``JUPYTER_DATA_DIR``) where the Makefile says
    ``--sys-prefix``: the tests share one virtualenv, whose kernelspecs every test sees."""
    words = make_lab_kernelspec()
    assert "--sys-prefix" in words, words
    words = ["--user" if w == "--sys-prefix" else w for w in words]
    subprocess.run([str(BIN / "jupyter-cluster"), *words], env=env, check=True, capture_output=True)


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
    from jupyter_cluster.engine.store.sessions import Store

    db = lab.data_dir / "cluster" / "cluster.db"
    if db.exists():
        manager_id = Store(db).manager_id
        assert_nothing_left(manager_id, *remove_leftovers(manager_id))


def test_lab_end_to_end(lab: Lab) -> None:
    """Launch size 3 from the launcher, use it (notebook, logs, terminal), terminate it."""
    results, output = run_script({"LAB_URL": lab.url, "LAB_TOKEN": lab.token}, ARTIFACTS)

    # Nothing may be left, whatever happened in the browser.
    _stop(lab)
    _assert_nothing_left(lab)

    assert_results(results, output, ARTIFACTS)
    _assert_usage_and_kept_logs(results)
    _assert_terminals_in_every_container(results)


def _assert_usage_and_kept_logs(results: dict[str, Any]) -> None:
    """The live graphs of the running session, and sub1's log after it ended."""
    ran = {s["name"] for s in results["steps"] if s["ok"]}
    assert {"usage-graphs", "logs-after-termination"} <= ran, results["steps"]
    outputs = results["outputs"]
    usage = outputs["usage"]
    assert len(re.findall(r"CPU \d+(\.\d+)?%", usage)) == 3, usage  # main1, sub1, sub2
    assert len(re.findall(r"MEM \S+ / \S+", usage)) == 3, usage
    labels = outputs["usageLabels"]
    assert any(x.startswith("CPU use of sub1 over the last") for x in labels), labels
    assert any(x.startswith("Memory use of main1 over the last") for x in labels), labels
    assert "kept at termination" in outputs["keptNote"], outputs["keptNote"]
    assert "this is the log of sub1" in outputs["keptNote"], outputs["keptNote"]
    assert READY in outputs["keptLog"], outputs["keptLog"]
    for name in ("usage-graphs", "logs-after-termination"):
        assert any(name in shot for shot in results["screenshots"]), name


def _assert_terminals_in_every_container(results: dict[str, Any]) -> None:
    """A size-2 session's "Terminals" button opened a terminal tab in main1, then one in
    sub1 right after it, titled with host and session; each shell runs in its host;
    an ended one's name gives no new shell."""
    ran = {s["name"] for s in results["steps"] if s["ok"]}
    assert "terminals-every-container" in ran, results["steps"]
    outputs = results["outputs"]
    shells = outputs["everyTerminal"]
    assert list(shells) == ["main1", "sub1"], shells
    for host, text in shells.items():
        other = "sub1" if host == "main1" else "main1"
        assert f"I AM {host}" in text and f"I AM {other}" not in text, text
    name = outputs["tabsSession"]
    bar = next(b for b in outputs["terminalTabs"] if f"main1 · {name}" in b)
    at = bar.index(f"main1 · {name}")
    assert bar[at + 1] == f"sub1 · {name}", bar
    assert any("terminals-every-container" in shot for shot in results["screenshots"])
    # After sub1's shell ended, Lab's terminal:open under its name (as a reload
    # restores a tab) was refused by the server: no host shell took the name.
    assert outputs["reopenEnded"].startswith("refused 409: cluster_sub1_"), outputs
