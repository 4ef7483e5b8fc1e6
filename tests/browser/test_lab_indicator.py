"""A notebook names the cluster session it runs in: a real ``jupyter lab``, Docker, Chromium.

A 3 x 0.5 CPU, 512m session is launched with a kernel through REST (as the launch
dialog does); ``lab_indicator.js`` opens a notebook on its kernel, reads the item the
extension puts after the kernel's name in the notebook's toolbar (the session's name
and real shape, and its status), clicks it and sees the session marked in the Cluster
Sessions sidebar. Screenshots and ``results.json`` go to
``test-artifacts/browser-indicator/``. Needs what ``test_lab_e2e.py`` needs (it shares
its ``lab`` fixture); fails, never skips, without it.
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

ARTIFACTS = ARTIFACTS_ROOT / "browser-indicator"
SHAPE = {"size": 3, "cpu": 0.5, "mem": "512m", "start_kernel": True}


def test_a_notebook_names_its_cluster_session(_lab: Lab) -> None:  # noqa: F811
    lab = _lab  # test_lab_e2e's server fixture
    code, body = _call(lab, "POST", "cluster/api/sessions", SHAPE)
    assert code == 201, body
    sid = json.loads(body)["id"]
    deadline = time.monotonic() + 180
    while True:
        session: dict[str, Any] = lab.api("GET", f"sessions/{sid}")
        assert session["status"] not in ("ERROR", "CANCELLED", "TERMINATED"), session
        assert session.get("kernel_state") != "failed", session
        if session["status"] == "RUNNING" and session.get("kernel_state") == "running":
            break
        assert time.monotonic() < deadline, f"the session's kernel did not start: {session}"
        time.sleep(0.5)

    env = {
        "LAB_URL": lab.url,
        "LAB_TOKEN": lab.token,
        "SESSION_ID": sid,
        "ARTIFACTS": str(ARTIFACTS),
        "CHROMIUM": CHROMIUM,
    }
    results, output = run_lab_script("lab_indicator.js", env, ARTIFACTS, lab)

    assert results["ok"], f"{results}\n{output}"
    out = results["outputs"]
    # The toolbar's kernel name is the kernelspec's (the launch form's defaults);
    # the item next to it says the session's real shape.
    assert out["label"] == f"Cluster {session['name']}: 3 {TIMES} 0.5 CPU, 512m", out
    assert out["status"] == "RUNNING", out
    assert out["sidebarVisibleBefore"] is False, out
    assert out["sidebarVisibleAfter"] is True, out
    assert out["rowName"] == session["name"], out
