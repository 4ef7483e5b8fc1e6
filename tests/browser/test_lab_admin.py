"""The Lab's admin view and the status bar's session item: a real ``jupyter lab``, Docker, Chromium.

On a single-user server the owner administers its own sessions (``GET me`` says
``admin``), so the Lab offers the "Cluster Admin" command. A 3 x 0.5 CPU, 512m
session runs with a kernel and a second launch waits for room (PENDING);
``lab_admin.js`` opens a notebook on the first session's kernel and reads the
status bar's item (the session's name, real shape and status; a click shows it in
the sidebar), then opens the admin panel from the palette: both sessions with their
owner, the waiting one in the queue with the server's reason, the agents, usage and
the owner's policy entry (or the note that a server has no policies routes), and
ends the waiting session with a reason, which the session then carries; then the
"Cluster Usage" tab (every user has the command) with its table and chart. Screenshots
(``admin-panel.png``) and ``results.json`` go to ``test-artifacts/browser-admin/``. A
non-admin's side (403, no admin flag) is tested against the server in
``tests/server/test_admin_view.py``.
"""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from jupyter_cluster.provisioning.kernelspec import TIMES
from tests.support.lab import ARTIFACTS_ROOT, CHROMIUM

from .test_lab_apps import _call, run_lab_script
from .test_lab_e2e import Lab
from .test_lab_e2e import lab as _lab  # noqa: F401  (the server, as fixture _lab)
from .test_lab_e2e import prerequisites as _prerequisites  # noqa: F401  (autouse)

pytestmark = pytest.mark.docker

ARTIFACTS = ARTIFACTS_ROOT / "browser-admin"
SHAPE = {"size": 3, "cpu": 0.5, "mem": "512m", "start_kernel": True}
REASON = "the GPU hosts are serviced at 14:00"


def _launch(lab: Lab, body: dict[str, Any]) -> dict[str, Any]:
    code, reply = _call(lab, "POST", "cluster/api/sessions", body)
    assert code == 201, reply
    return dict(json.loads(reply))


def _until(lab: Lab, sid: str, done: Any, what: str, timeout: float = 180) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        session: dict[str, Any] = lab.api("GET", f"sessions/{sid}")
        if done(session):
            return session
        assert session["status"] not in ("ERROR", "TERMINATED"), session
        assert time.monotonic() < deadline, f"{what}: {session}"
        time.sleep(0.5)


def test_the_admin_panel_and_the_status_bar(_lab: Lab) -> None:  # noqa: F811
    lab = _lab  # test_lab_e2e's server fixture
    me = lab.api("GET", "me")
    assert me["admin"] is True, me  # the owner of a single-user server
    running = _launch(lab, SHAPE)
    running = _until(
        lab,
        running["id"],
        lambda s: s["status"] == "RUNNING" and s.get("kernel_state") == "running",
        "the session's kernel did not start",
    )
    agent = next(a for a in lab.api("GET", "agents") if a["resource_group"] == "default")
    cpu = min(agent["capacity"]["cpu"], agent["free"]["cpu"] + 0.25)
    waiting = _launch(lab, {"size": 1, "cpu": round(cpu, 3), "mem": "256m"})
    waiting = _until(lab, waiting["id"], lambda s: s["status"] == "PENDING", "not PENDING")

    agent_ids = [a["id"] for a in lab.api("GET", "agents")]
    limits_code, _ = _call(lab, "GET", "cluster/api/limits")  # not on every server yet
    env = {
        "LAB_URL": lab.url,
        "LAB_TOKEN": lab.token,
        "RUNNING_ID": running["id"],
        "WAITING_ID": waiting["id"],
        "REASON": REASON,
        "ARTIFACTS": str(ARTIFACTS),
        "CHROMIUM": CHROMIUM,
    }
    results, output = run_lab_script("lab_admin.js", env, ARTIFACTS, lab)  # stops the server

    assert results["ok"], f"{results}\n{output}"
    assert not results["consoleErrors"], results["consoleErrors"]
    out = results["outputs"]
    shape = f"3 {TIMES} 0.5 CPU, 512m"
    assert out["statusText"] == f"Cluster {running['name']}: {shape} \u00b7 RUNNING", out
    assert out["sidebarVisibleAfter"] is True, out
    assert out["paletteHasAdmin"] is True, out
    owner = me["name"]
    assert out["sessionRows"] == [[running["id"], owner], [waiting["id"], owner]], out
    assert out["queue"] == [waiting["id"]], out
    assert out["queueReason"].strip(), out  # the server's reason why it waits
    assert out["agents"] == agent_ids, out
    assert out["usageUsers"] == [owner], out
    # Each user's policy entry (GET limits/users/NAME); a server without the
    # policies routes is said to have none.
    assert out["policiesMissing"] is (limits_code == 404), out
    assert out["policyUsers"] == ([] if limits_code == 404 else [owner]), out
    assert out["ended"]["status"] == "CANCELLED", out
    assert REASON in out["ended"]["status_reason"], out
    # "Cluster Usage" (every user's command): the admin's view has a user column,
    # the measured CPU time, and a bar for the session that ran
    assert out["usageTabUsers"] == [owner], out
    assert out["usageTabHeader"][0] == "User" and "CPU used" in out["usageTabHeader"], out
    assert running["id"] in out["usageTabBars"], out
