"""The JupyterLab e2e once as a JupyterHub user: alice, logged in through the Hub's form.

``tests/browser/lab_e2e.js`` (headless Chromium) opens the Hub's login page, logs in
as ``alice`` the way a person does (with her own Unix password: the Hub uses PAM),
then opens her server's Lab
through the Hub's proxy (``/user/alice/lab``) and clicks through the same flow as the
single-user e2e: the launcher tile, the launch dialog (size 3), a notebook on the
session's kernel (its hosts, ``!ssh sub2 hostname``), the log panel, a terminal in
``sub1``, a second launch that must wait (PENDING) and is cancelled, the palette, the
dark theme and terminate.

In team mode alice's server is a client of the shared service: the Lab extension
calls her server's ``cluster/api/…`` routes, which forward to the service with her
server's token; the kernel runs in main1 over SSH from her server and the terminal
in sub1 is an ssh process in her server. Her server gets the options and settings
the script relies on from the tests' Hub config (:mod:`.lab_config`). Screenshots,
``results.json``, the script's output and the Hub's log (alice's server and the
service log there) go to ``test-artifacts/hub/`` (or ``$JUPYTER_CLUSTER_ARTIFACTS/hub``).
"""

from __future__ import annotations

import shutil

import pytest

from tests.support.lab import ARTIFACTS_ROOT, assert_results, browser_problems, run_script

from .support import Hub, active_sessions, end_sessions, ok

pytestmark = pytest.mark.docker

USER = "alice"
ARTIFACTS = ARTIFACTS_ROOT / "hub"


def test_lab_as_hub_user(hub: Hub) -> None:
    """alice logs in through the Hub's form and runs the whole Lab flow on her server."""
    problems = browser_problems()
    if problems:
        pytest.fail("the browser test cannot run: " + "; ".join(problems))
    base = hub.start_server(USER)
    token = hub.token(USER)
    assert active_sessions(hub, USER, token) == [], "alice has sessions before the test"
    env = {
        "LAB_URL": base,
        "HUB_LOGIN_URL": f"{hub.url}/hub/login",
        "HUB_USER": USER,
        # Her own Unix password (PAM), as the Hub's administrator set it.
        "HUB_PASSWORD": hub.passwords[USER],
    }
    try:
        results, output = run_script(env, ARTIFACTS)
    finally:
        # Nothing may be left, whatever happened in the browser.
        left = end_sessions(hub, USER, token)
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(hub.log, ARTIFACTS / "hub.log")
    assert_results(results, output, ARTIFACTS)
    assert not left, f"sessions were left active: {left}"
    # The terminal in sub1 ended with its session: no ssh process left in her server.
    terminals = ok(hub.server_call(USER, "GET", "api/terminals", token)).json()
    assert terminals == [], terminals
