"""A web app in main1 opened as a JupyterLab tab: a real ``jupyter lab``, Docker, Chromium.

A session is launched with an app declared (``apps``); the app (a page and a
WebSocket echo, :data:`tests.server.test_app_proxy.APP`) is started in its main1;
``lab_apps.js`` clicks the app's button in the sidebar and sees the page render in
the tab's iframe and its WebSocket answer through the server's app proxy, then opens
a port nothing listens on with the command "Open Port in main1…" and sees the
proxy's 502 page. Screenshots and ``results.json`` go to ``test-artifacts/browser-apps/``.
Needs what ``test_lab_e2e.py`` needs (it shares its ``lab`` fixture); fails, never
skips, without it.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tests.server.test_app_proxy import APP, APP_PORT
from tests.support.constants import REPO
from tests.support.lab import ARTIFACTS_ROOT, CHROMIUM, node_in_own_network

from .test_lab_e2e import Lab, _assert_nothing_left, _stop
from .test_lab_e2e import lab as _lab  # noqa: F401  (the server, as fixture _lab)
from .test_lab_e2e import prerequisites as _prerequisites  # noqa: F401  (autouse)

pytestmark = pytest.mark.docker

ARTIFACTS = ARTIFACTS_ROOT / "browser-apps"


def run_lab_script(script: str, env: dict[str, str], artifacts: Path, lab: Lab) -> tuple[Any, str]:
    """Run ``tests/browser/SCRIPT`` (Playwright in node) against ``lab`` with ``env``;
    then stop the server and check nothing is left. Its ``results.json`` in
    ``artifacts``, and what node printed. Shared by the Lab tests after the e2e."""
    artifacts.mkdir(parents=True, exist_ok=True)
    (artifacts / "results.json").unlink(missing_ok=True)
    with node_in_own_network(REPO / "tests" / "browser" / script, env) as command:
        done = subprocess.run(
            command,
            capture_output=True,
            text=True,
            timeout=300,
            env={**os.environ, **env},
            cwd=REPO,
        )
    results = json.loads((artifacts / "results.json").read_text())
    assert results.get("networkChanged") == 0, results
    _stop(lab)
    _assert_nothing_left(lab)
    return results, done.stdout + done.stderr


def _call(lab: Lab, method: str, path: str, body: Any = None) -> tuple[int, bytes]:
    """(status, body) of a request to the Lab server with its token."""
    request = urllib.request.Request(
        f"{lab.url}{path}",
        method=method,
        data=None if body is None else json.dumps(body).encode(),
        headers={"Authorization": f"token {lab.token}"},
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def _wait(probe: Any, timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = probe()
        if found:
            return found
        time.sleep(0.5)
    pytest.fail(f"timed out waiting for {what}")


def test_an_app_in_main1_opens_as_a_lab_tab(_lab: Lab) -> None:  # noqa: F811
    lab = _lab  # test_lab_e2e's server fixture
    code, body = _call(lab, "POST", "cluster/api/sessions", {"apps": {"echo": APP_PORT}})
    assert code == 201, body
    sid = json.loads(body)["id"]

    def running() -> Any:
        session = lab.api("GET", f"sessions/{sid}")
        assert session["status"] not in ("ERROR", "CANCELLED", "TERMINATED"), session
        return session if session["status"] == "RUNNING" else None

    session = _wait(running, 120, "the session to run")
    main1 = session["containers"][0]["container_id"]
    subprocess.run(
        ["docker", "exec", "-d", "-u", "work", main1, "python3", "-c", APP],
        check=True,
        timeout=60,
    )
    proxy = f"cluster/proxy/{sid}/{APP_PORT}/"
    _wait(lambda: _call(lab, "GET", proxy)[0] == 200, 30, "the app through the proxy")

    env = {
        "LAB_URL": lab.url,
        "LAB_TOKEN": lab.token,
        "SESSION_ID": sid,
        "APP_NAME": "echo",
        "APP_PORT": str(APP_PORT),
        "CLOSED_PORT": str(APP_PORT + 1),
        "ARTIFACTS": str(ARTIFACTS),
        "CHROMIUM": CHROMIUM,
    }
    results, output = run_lab_script("lab_apps.js", env, ARTIFACTS, lab)

    assert results["ok"], f"{results}\n{output}"
    out = results["outputs"]
    assert out["button"].strip().startswith(f"echo :{APP_PORT}"), out
    assert out["src"].endswith(f"/cluster/proxy/{sid}/{APP_PORT}/"), out
    assert out["heading"] == "hello from main1", out
    assert out["echo"] == "echo:ping", out  # the page's WebSocket answered in the tab
    assert f"echo · {session['name']}" in out["tabLabels"], out
    assert f"Nothing listens on port {APP_PORT + 1} in main1" in out["closed"], out
