"""The Lab launch dialog offers launch profiles first (issue 25 item 4): a real
``jupyter lab``, Chromium, no session launched.

Two profiles of the user are saved through REST (``PUT cluster/api/profiles/NAME``):
one that fits, one over the CPU limit. ``lab_profiles.js`` opens the dialog from the
launcher, reads the Profile select (the first field; the big one disabled with the
server's reason), chooses the one that fits and reads the fields it filled, types a
wrong then a right line into the Apps field (the error shown, Launch disabled), then
cancels. Screenshots and ``results.json`` go to ``test-artifacts/browser-profiles/``.
Needs what ``test_lab_e2e.py`` needs (it shares its ``lab`` fixture); fails, never
skips, without it.
"""

from __future__ import annotations

import json

import pytest

from tests.support.lab import ARTIFACTS_ROOT, CHROMIUM

from .test_lab_apps import _call, run_lab_script
from .test_lab_e2e import Lab
from .test_lab_e2e import lab as _lab  # noqa: F401  (the server, as fixture _lab)
from .test_lab_e2e import prerequisites as _prerequisites  # noqa: F401  (autouse)

pytestmark = pytest.mark.docker

ARTIFACTS = ARTIFACTS_ROOT / "browser-profiles"
PAIR = {"description": "two small", "fields": {"size": 2, "cpu": 0.5, "mem": "512m",
                                              "env": {"FROM": "pair"},
                                              "apps": {"tb": 6006}}}  # fmt: skip
HUGE = {"description": "", "fields": {"cpu": 4096}}
# Its retries have no field in the dialog: they were dropped from the launch.
JOB = {"description": "", "fields": {"command": "true", "retries": 1}}


def test_the_launch_dialog_offers_profiles_first(_lab: Lab) -> None:  # noqa: F811
    lab = _lab  # test_lab_e2e's server fixture
    for name, body in (("pair", PAIR), ("huge", HUGE), ("job", JOB)):
        code, answer = _call(lab, "PUT", f"cluster/api/profiles/{name}", body)
        assert code == 200, answer
    listed = {p["name"]: p for p in lab.api("GET", "launch-options")["profiles"]}
    reason = listed["huge"]["reason"]
    assert listed["huge"]["disabled"] and reason.startswith("cpu: "), listed

    env = {
        "LAB_URL": lab.url,
        "LAB_TOKEN": lab.token,
        "PROFILE": "pair",
        "JOB_PROFILE": "job",
        "ARTIFACTS": str(ARTIFACTS),
        "CHROMIUM": CHROMIUM,
    }
    results, output = run_lab_script("lab_profiles.js", env, ARTIFACTS, lab)

    assert results["ok"], f"{json.dumps(results, indent=1)}\n{output}"
    out = results["outputs"]
    assert out["firstSelect"] == "profile", out
    entries = {e["value"]: e for e in out["entries"]}
    assert out["entries"][0]["value"] == "" and set(entries) == {"", "pair", "huge", "job"}, out
    assert entries["pair"]["disabled"] is False
    assert entries["pair"]["text"] == "pair: two small"
    assert entries["huge"]["disabled"] is True and entries["huge"]["title"] == reason
    assert reason in entries["huge"]["text"]
    filled = {"size": "2", "cpu": "0.5", "mem": "512m", "env": "FROM=pair\n", "apps": "tb=6006\n"}
    assert out["filled"] == filled, out
    assert out["launchEnabled"] is True, out
    assert out["jobDryRun"] == {"command": "true", "retries": 1}, out
    assert out["appsError"] == "Line 2: port 70000 is out of range; use 1 to 65535.", out
    assert out["launchEnabledWithBadApps"] is False, out
    assert out["appsTyped"] == "tb=6006\nweb = 8080" and out["launchEnabledWithApps"], out
    assert results["consoleErrors"] == [], results
