"""``launch --no-wait``, PENDING sessions and cancelling them (issue #2: 13).

The agent's capacity is set small with a ``jupyter_cluster_config.py`` in the
workspace's ``JUPYTER_CONFIG_DIR``, so a second session does not fit while the
first runs. Detached drivers (``python -m jupyter_cluster.cli.driver``) move the
sessions on after the CLI has returned. Also: ``rm`` while a session is still
being prepared, and concurrent launches that must not over-allocate the agent.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any

import pytest

from tests.support.constants import CLI, SMALL_FLAGS
from tests.support.docker import session_objects
from tests.support.processes import alive
from tests.support.waiting import wait_for

from .support import Workspace

pytestmark = pytest.mark.docker

SMALL_AGENT = 'c.ClusterManager.agents = [{"id": "local", "cpu": 2, "mem": "4g"}]\n'


def wait_status(ws: Workspace, ref: str, status: str, timeout: float = 90) -> dict[str, Any]:
    """Poll ``show --json`` until the session has ``status``; return it."""

    shown: dict[str, Any] = {}

    def reached() -> bool:
        nonlocal shown
        shown = ws.show(ref)
        assert shown["status"] not in {"ERROR", "CANCELLED", "TERMINATED"} - {status}, shown
        return shown["status"] == status

    wait_for(reached, timeout, f"session {ref} to become {status}", seen=lambda: shown)
    return shown


def test_no_wait_returns_at_once_and_the_session_runs_later(ws: Workspace) -> None:
    started = time.monotonic()
    session = ws.launch("--size", "2", *SMALL_FLAGS, "--no-wait")
    elapsed = time.monotonic() - started
    assert session["status"] in ("PENDING", "PREPARING"), session
    assert elapsed < 10, f"launch --no-wait took {elapsed:.1f} s"
    running = wait_status(ws, session["id"], "RUNNING")
    assert [c["status"] for c in running["containers"]] == ["RUNNING", "RUNNING"]
    out = ws.exec(session["id"], "main1", "ssh", "sub1", "hostname")
    assert out.stdout == "sub1\n", str(out)
    ws.ok_cli("rm", session["id"])
    assert session_objects(session["id"]) == ([], [])


def test_pending_session_starts_when_room_appears_and_can_be_cancelled(ws: Workspace) -> None:
    ws.write_config(SMALL_AGENT)
    agents = ws.json("agents")
    assert agents[0]["capacity"]["cpu"] == 2 and agents[0]["capacity"]["mem"] == 4 * 1024**3

    first = ws.launch("--size", "2", "--cpu", "1", "--mem", "256m", "--name", "first")
    assert first["status"] == "RUNNING"
    assert ws.json("agents")[0]["free"]["cpu"] == 0

    second = ws.launch("--size", "1", *SMALL_FLAGS, "--name", "second", "--no-wait")
    assert second["status"] == "PENDING", second
    assert second["status_reason"], "a PENDING session says why it waits"
    assert "local" in second["status_reason"]
    time.sleep(2)  # its driver keeps trying; still no room
    still = ws.show("second")
    assert still["status"] == "PENDING" and still["status_reason"]
    assert session_objects(second["id"]) == ([], [])
    assert "PENDING" in ws.ok_cli("ls").stdout

    ws.ok_cli("rm", "first")
    running = wait_status(ws, "second", "RUNNING")
    assert running["containers"][0]["container_id"]
    assert ws.sh("second", "main1", "hostname") == "main1\n"

    # 0.25 CPU is used now: a session needing 2 CPUs waits, and rm cancels it.
    third = ws.launch("--size", "2", "--cpu", "1", "--mem", "256m", "--no-wait", "--name", "third")
    assert third["status"] == "PENDING", third
    pid = ws.driver_pid(third["id"])
    assert pid and alive(pid)
    cancelled = ws.json("rm", "third")
    assert [s["status"] for s in cancelled] == ["CANCELLED"]
    assert ws.show(third["id"])["status"] == "CANCELLED"
    wait_for(lambda: not alive(pid), 30, "the cancelled session's driver to exit")
    assert session_objects(third["id"]) == ([], [])
    assert [s["name"] for s in ws.json("ls")] == ["second"]
    assert {s["name"]: s["status"] for s in ws.json("ls", "--all")} == {
        "first": "TERMINATED",
        "second": "RUNNING",
        "third": "CANCELLED",
    }

    ws.ok_cli("rm", "second")
    assert ws.json("ls") == []
    assert os.path.isdir(ws.cluster_dir / "drivers")


def test_rm_while_preparing_leaves_nothing(ws: Workspace) -> None:
    session = ws.launch("--size", "3", *SMALL_FLAGS, "--no-wait")
    assert session["status"] in ("PENDING", "PREPARING"), session
    pid = ws.driver_pid(session["id"])
    ended = ws.json("rm", session["id"])
    assert [s["status"] for s in ended] == ["TERMINATED"]
    if pid:
        wait_for(lambda: not alive(pid), 60, "the launch driver to exit")
    assert session_objects(session["id"]) == ([], [])
    assert ws.show(session["id"])["status"] == "TERMINATED"
    assert ws.json("ls") == []


def test_concurrent_launches_never_over_allocate(ws: Workspace) -> None:
    ws.write_config('c.ClusterManager.agents = [{"id": "local", "cpu": 1, "mem": "4g"}]\n')
    args = (*CLI, "launch", "--size", "2", "--cpu", "0.5", "--mem", "256m", "--no-wait", "--json")
    procs = [ws.popen(*args) for _ in range(3)]
    launched = [json.loads(p.communicate(timeout=120)[0]) for p in procs]
    assert all(p.returncode == 0 for p in procs)
    statuses = sorted(s["status"] for s in launched)
    assert statuses[:2] == ["PENDING", "PENDING"], statuses  # room for one only
    first = next(s for s in launched if s["status"] != "PENDING")
    wait_status(ws, first["id"], "RUNNING")
    assert ws.json("agents")[0]["allocated"]["cpu"] == 1
    containers, _ = ws.docker_objects()
    assert len(containers) == 2
    ws.ok_cli("rm", *(s["id"] for s in launched))
    wait_for(lambda: ws.json("ls") == [], 60, "every session to end")
    ended = {s["status"] for s in ws.json("ls", "--all")}
    assert ended <= {"TERMINATED", "CANCELLED"}, ended


def test_waiting_sessions_start_first_in_first_out_across_processes(ws: Workspace) -> None:
    """Room for 2 of 0.5 CPU; 2 run, then 6 wait, each driven by its own detached
    process. When the 2 running ones end, the 2 that waited longest start, in
    creation order, and the rest keep waiting; over-booking never happens."""
    ws.write_config('c.ClusterManager.agents = [{"id": "local", "cpu": 1, "mem": "4g"}]\n')
    flags = ("--cpu", "0.5", "--mem", "256m", "--no-wait")
    running = [ws.launch(*flags, "--name", f"run{i}") for i in range(2)]
    for session in running:
        wait_status(ws, session["id"], "RUNNING")
    waiting = [ws.launch(*flags, "--name", f"wait{i}") for i in range(6)]
    assert [s["status"] for s in waiting] == ["PENDING"] * 6
    later = ws.show("wait5")["status_reason"]
    assert "waiting behind 5 earlier session(s)" in later and "wait0" in later, later

    ws.ok_cli("rm", "run0", "run1")
    wait_status(ws, "wait0", "RUNNING")
    wait_status(ws, "wait1", "RUNNING")
    time.sleep(2)  # the other drivers keep polling: none may overtake or over-book
    statuses = {s["name"]: s["status"] for s in ws.json("ls")}
    assert statuses == {
        "wait0": "RUNNING",
        "wait1": "RUNNING",
        **{f"wait{i}": "PENDING" for i in range(2, 6)},
    }
    assert ws.json("agents")[0]["allocated"]["cpu"] == 1
    ws.ok_cli("rm", *(f"wait{i}" for i in range(6)))
    wait_for(lambda: ws.json("ls") == [], 60, "every session to end")
