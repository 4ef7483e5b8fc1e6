"""A dry run in team mode, as bob: his Unix user with the CLI, and his own server.

``launch --dry-run`` asks the service (``POST sessions?dry_run=1``) with bob's limits
and folders, and nothing is made. ``kernelspec install`` asks it too: a kernelspec
whose kernels the service would refuse for bob is written with a warning that says
why (before, the warning was given for a local engine only). The Lab launch dialog
asks bob's own server, which passes the dry run on to the service: at his session
limit, it says the launch would be refused, as the launch then is.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.support.constants import API, SMALL_FLAGS
from tests.support.waiting import wait_for

from .launch import MAX_SESSIONS
from .support import Hub, active_sessions, end_sessions, launch, ok, status, wait_running

CLI = "jupyter-cluster"


def test_bob_asks_the_service_what_a_launch_would_meet_and_nothing_is_made(
    hub: Hub, team: dict[str, str]
) -> None:
    said = hub.run_as("bob", [CLI, "launch", "--size", "2", *SMALL_FLAGS, "--dry-run"])
    assert said.returncode == 0, said.stderr
    assert said.stdout.startswith("would start now on "), said.stdout
    assert said.stdout.rstrip().endswith(": main1, sub1"), said.stdout
    nowhere = hub.run_as("bob", [CLI, "launch", "--mount", "nowhere", "--dry-run"])
    assert nowhere.returncode != 0 and "no data folder" in nowhere.stderr, nowhere
    assert active_sessions(hub, "bob", team["bob"]) == []


def test_a_kernelspec_the_service_would_refuse_bob_is_written_with_a_warning(
    hub: Hub, team: dict[str, str]
) -> None:
    kernels = Path("/home/bob/.local/share/jupyter/kernels")
    try:
        big = hub.run_as(
            "bob", [CLI, "kernelspec", "install", "huge", "--user", "--size", "4", "--cpu", "2"]
        )
        assert big.returncode == 0, big.stderr
        assert big.stdout.startswith("installed kernelspec huge in "), big.stdout
        assert big.stderr.startswith("warning: kernel huge cannot start as things are now: "), big
        assert "size" in big.stderr, big.stderr
        folder = hub.run_as(
            "bob", [CLI, "kernelspec", "install", "withdata", "--user", "--mount", "nowhere"]
        )
        assert folder.returncode == 0 and "no data folder" in folder.stderr, folder
        fine = hub.run_as("bob", [CLI, "kernelspec", "install", "small", "--user", *SMALL_FLAGS])
        assert fine.returncode == 0 and fine.stderr == "", fine
        assert (kernels / "huge" / "kernel.json").is_file()
    finally:
        for name in ("huge", "withdata", "small"):
            shutil.rmtree(kernels / name, ignore_errors=True)
    assert active_sessions(hub, "bob", team["bob"]) == []


def test_bobs_server_passes_the_dry_run_on_and_it_counts_his_sessions(
    hub: Hub, team: dict[str, str]
) -> None:
    token, small = team["bob"], {"cpu": 0.25, "mem": "256m"}
    url = f"{API}/sessions?dry_run=1"
    try:
        found = hub.server_call("bob", "POST", url, token, json=small)
        assert found.status_code == 200, found.text
        assert found.json()["starts_now"] is True, found.json()
        for _ in range(MAX_SESSIONS):
            launch(hub, "bob", token, small)
        refused = hub.server_call("bob", "POST", url, token, json=small)
        assert refused.status_code == 409, refused.text
        assert "limit" in refused.json()["message"], refused.json()
        launched = hub.server_call("bob", "POST", f"{API}/sessions", token, json=small)
        assert launched.status_code == 409 and launched.json() == refused.json()
        assert len(active_sessions(hub, "bob", token)) == MAX_SESSIONS
    finally:
        end_sessions(hub, "bob", token)


def test_bobs_dry_run_behind_alices_waiting_session_does_not_name_it(
    hub: Hub, team: dict[str, str]
) -> None:
    """From the other side: bob fills the agent, alice's named launch waits; bob's dry
    run says he would wait behind another user's session, and alice's says her own."""
    alice, bob = team["alice"], team["bob"]
    (agent,) = ok(hub.server_call("bob", "GET", f"{API}/agents", bob)).json()
    free = float(agent["free"]["cpu"])
    body = {"size": 1, "mem": "256m"}
    url = f"{API}/sessions?dry_run=1"
    try:
        filler = launch(hub, "bob", bob, {**body, "cpu": free})
        wait_running(hub, "bob", bob, filler["id"])
        waiting = launch(hub, "alice", alice, {**body, "cpu": free / 2, "name": "alices-secret"})
        wait_for(
            lambda: status(hub, "alice", alice, waiting["id"])["status_reason"].startswith("1st"),
            60,
            "alice's session to wait first in the queue",
        )
        bobs = ok(hub.server_call("bob", "POST", url, bob, json={**body, "cpu": free})).json()
        assert bobs["starts_now"] is False, bobs
        assert "(next: another user's session)" in bobs["reason"], bobs
        assert "alices-secret" not in bobs["reason"], bobs
        hers = ok(hub.server_call("alice", "POST", url, alice, json={**body, "cpu": 0.25})).json()
        assert "(next: alices-secret)" in hers["reason"], hers
    finally:
        end_sessions(hub, "alice", alice)
        end_sessions(hub, "bob", bob)
