"""Running ``tests/browser/lab_e2e.js`` and checking what it saw, wherever its Lab runs.

The single-user e2e (``tests/browser/test_lab_e2e.py``) and the one as a JupyterHub
user (``tests/hub/test_lab_as_hub_user.py``) share this: the server's options and
settings the script relies on (it reads terminal text from xterm's accessibility
tree, ``screenReaderMode``; must not meet the news prompt; switches themes through
``window.jupyterapp``, ``expose_app_in_browser``), running the script
(:func:`run_script`) and the checks of its results (:func:`assert_results`).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import shutil
import subprocess
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from .browser_network import own_network
from .constants import READY, REPO

#: The script, and the node modules it takes playwright-core from.
SCRIPT = REPO / "tests" / "browser" / "lab_e2e.js"
NODE_MODULES = REPO / "labextension" / "node_modules"
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
#: The variables that give the browser scripts the servers they open (each reached
#: from the browser's own network namespace, see :mod:`.browser_network`).
BROWSER_URLS = ("LAB_URL", "HUB_LOGIN_URL")
#: Where the browser tests put screenshots, results and logs (in a folder of their own).
ARTIFACTS_ROOT = Path(os.environ.get("JUPYTER_CLUSTER_ARTIFACTS") or REPO / "test-artifacts")

#: Command-line options of the server (``jupyter lab`` or ``jupyterhub-singleuser``).
LAB_ARGS = ("--LabApp.expose_app_in_browser=True", "--ClusterApp.events_poll_interval=0.2")


def _lab_commands(makefile: Path) -> list[list[str]]:
    """The commands of the Makefile's ``lab`` target, each split as the shell splits
    it (continued lines joined). Fails if the target is gone."""
    lines = makefile.read_text().splitlines()
    start = next((i for i, line in enumerate(lines) if re.match(r"lab\s*:", line)), None)
    assert start is not None, f"{makefile} has no lab target"
    commands, current = [], ""
    for line in lines[start + 1 :]:
        if not line.startswith("\t") and not current:
            break
        current += " " + line.strip().removesuffix("\\")
        if not line.rstrip().endswith("\\"):
            commands.append(shlex.split(current))
            current = ""
    return commands


def make_lab_options(makefile: Path = REPO / "Makefile") -> list[str]:
    """The configuration options (``--Class.trait=value``) that the Makefile's ``lab``
    target, the README's first command, gives ``jupyter lab``: the browser tests' Lab
    runs with them too (the adaptive warm pool among them), so that it is the Lab a
    new user gets. Fails if the target or its ``jupyter lab`` line is gone."""
    runs = [c for c in _lab_commands(makefile) if c[:1] and c[0].endswith("/jupyter")]
    runs = [c for c in runs if c[1:2] == ["lab"]]
    assert runs, f"the lab target of {makefile} runs no jupyter lab"
    return [w for w in runs[0][2:] if re.fullmatch(r"--[A-Za-z]\w*\.\w+=\S+", w)]


def make_lab_kernelspec(makefile: Path = REPO / "Makefile") -> list[str]:
    """The arguments the Makefile's ``lab`` target gives ``jupyter-cluster`` to install
    the kernelspec the README tells a new user to pick (``kernelspec install cluster2
    …``): the browser tests' Lab gets it too. Fails if that command is gone."""
    installs = [
        c[1:]
        for c in _lab_commands(makefile)
        if c[:1] and c[0].endswith("/jupyter-cluster") and c[1:3] == ["kernelspec", "install"]
    ]
    assert installs, f"the lab target of {makefile} installs no kernelspec"
    return installs[0]


#: JupyterLab settings (plugin id under ``@jupyterlab`` → values).
LAB_SETTINGS = {
    "terminal-extension/plugin": {"screenReaderMode": True},
    "apputils-extension/notification": {"fetchNews": "false", "checkForUpdates": False},
}


def write_lab_settings(directory: Path) -> list[Path]:
    """Write :data:`LAB_SETTINGS` into a JupyterLab settings directory
    (``JUPYTERLAB_SETTINGS_DIR``); the files written."""
    written = []
    for plugin, values in LAB_SETTINGS.items():
        path = directory / "@jupyterlab" / f"{plugin}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))
        written.append(path)
    return written


def browser_problems() -> list[str]:
    """What is missing to run ``lab_e2e.js`` (chromium, node, playwright-core), if anything."""
    problems = []
    if not os.access(CHROMIUM, os.X_OK):
        problems.append(f"no chromium at {CHROMIUM} (apt-get install chromium, or make setup)")
    if shutil.which("node") is None:
        problems.append("node is not installed")
    if not (NODE_MODULES / "playwright-core").is_dir():
        problems.append(
            "labextension/node_modules has no playwright-core (cd labextension && jlpm)"
        )
    return problems


@contextlib.contextmanager
def node_in_own_network(script: Path, env: Mapping[str, str]) -> Iterator[list[str]]:
    """The command that runs the browser script ``script`` with node in a network
    namespace of its own, reaching the servers of ``env``'s :data:`BROWSER_URLS`
    (see :mod:`.browser_network`); shared by every browser test's runner."""
    urls = [env[name] for name in BROWSER_URLS if name in env]
    with own_network(["node", str(script)], urls) as command:
        yield command


def run_script(env: dict[str, str], artifacts: Path) -> tuple[dict[str, Any], str]:
    """Run ``lab_e2e.js`` with ``env`` (added to ours) writing to ``artifacts`` (its old
    screenshots and results removed first); what it wrote in ``results.json``, and its
    output (also in ``node.log``)."""
    artifacts.mkdir(parents=True, exist_ok=True)
    for old in artifacts.glob("*.png"):
        old.unlink()
    (artifacts / "results.json").unlink(missing_ok=True)
    env = {**os.environ, "ARTIFACTS": str(artifacts), "CHROMIUM": CHROMIUM, **env}
    try:
        with node_in_own_network(SCRIPT, env) as command:
            done = subprocess.run(
                command, capture_output=True, text=True, timeout=600, env=env, cwd=REPO
            )
        output = done.stdout + done.stderr
    except subprocess.TimeoutExpired as exc:
        parts = (
            p.decode(errors="replace") if isinstance(p, bytes) else p or ""
            for p in (exc.stdout, exc.stderr)
        )
        output = "".join(parts) + "\nnode timed out after 600 s"
    (artifacts / "node.log").write_text(output)
    print(output)
    results_file = artifacts / "results.json"
    assert results_file.exists(), f"the browser script wrote no results:\n{output}"
    return json.loads(results_file.read_text()), output


def assert_results(results: dict[str, Any], output: str, artifacts: Path) -> None:
    """Every step of the script passed and it saw what it must have seen."""
    failed = [s for s in results["steps"] if not s["ok"]]
    assert results["ok"] and not failed, f"{failed or results.get('error')}\n{output}"
    # In its own network namespace the browser sees none of Docker's interfaces.
    assert results["networkChanged"] == 0, results["networkChanged"]
    session, pending = results["sessionId"], results["pendingId"]
    seen = results["statuses"]
    statuses = seen[session]
    if statuses[0] == "PENDING":  # submitted, not placed yet when the first event came
        statuses = statuses[1:]
    assert statuses[:2] == ["PREPARING", "RUNNING"], seen
    assert seen[session][-1].startswith("TERMINATED"), seen
    # The waiting reason says the place in the queue, then what the session waits for.
    waiting = seen[pending][0]
    assert waiting.startswith("PENDING: 1st in the queue of resource group"), seen
    assert "waiting for one agent" in waiting, seen
    assert seen[pending][-1].startswith("CANCELLED"), seen
    notes = "\n".join(results["notifications"])
    assert "is PREPARING: 0 of 3 containers running" in notes, notes
    assert "is RUNNING; its kernel runs in main1" in notes, notes
    assert "is PENDING: 1st in the queue" in notes, notes

    outputs = results["outputs"]
    assert "HOSTS=main1,sub1,sub2" in outputs["notebook"], outputs
    assert "sub2" in outputs["notebook"].split(), outputs
    # JupyterLab's debugger, offered for the cluster kernel, ran in main1.
    assert outputs["debuggerOffered"] is True, outputs
    assert "os" in outputs["debuggerVariables"].split(), outputs["debuggerVariables"]
    assert "HOST=sub1 USER=work" in outputs["terminal"], outputs
    assert READY in outputs["logs"], outputs
    assert re.fullmatch(r"\d+ of \d+", outputs["logSearch"]), outputs
    download = artifacts / outputs["logDownload"]
    assert outputs["logDownload"].endswith("-sub1.log") and download.is_file()
    assert READY in download.read_text()
    assert results["remainingSessions"] == [], results["remainingSessions"]
    # The extension's kernelspec tile: a notebook in main1 of the session it launched
    # (the toolbar named it by the kernel), ended by "Shut Down Kernel".
    tile = outputs["tile"]
    assert tile["where"] == "AT main1", tile
    assert tile["running"]["status"] == "RUNNING", tile
    assert tile["running"]["kernel_id"] == tile["kernelId"], tile
    assert tile["ended"] == "TERMINATED", tile
    cluster_errors = [e for e in results["consoleErrors"] if "cluster" in e.lower()]
    assert not cluster_errors, cluster_errors
    for name in (
        "launcher",
        "launch-dialog-size3",
        "notebook-outputs",
        "debugger",
        "logs-sub1",
        "terminal-sub1",
        "sidebar-pending",
        "dark-launch-dialog",
        "terminated",
        "kernelspec-tile",
    ):
        assert any(name in shot for shot in results["screenshots"]), name
