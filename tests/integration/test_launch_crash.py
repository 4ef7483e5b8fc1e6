"""A launch whose driving process is SIGKILLed while PREPARING (issue #11: 5).

The launch has a slow ``--bootstrap``, so it stays PREPARING with its containers
created and its keys stored. Then the process driving it dies without a chance to
clean up: the foreground ``launch`` CLI, or the detached driver of a
``launch --no-wait``. The next command that starts a manager (``ls --all``) runs
start-up reconciliation, which must account for the session: ERROR with the reason
(the dead driver's pid), its containers and network removed from Docker, its keys
gone from the store and its resources free again; ``rm`` then moves it to history.

The store is read directly while waiting, so that no reconciliation runs before
the kill.
"""

from __future__ import annotations

import os
import signal
from typing import Any

import pytest

from jupyter_cluster.core.state import SessionStatus
from tests.support.constants import CLI, SMALL_FLAGS
from tests.support.docker import session_objects
from tests.support.processes import alive
from tests.support.waiting import wait_for

from .support import Workspace

pytestmark = pytest.mark.docker

#: A bootstrap that keeps the session PREPARING for longer than any test waits.
SLOW = ("--bootstrap", "sleep 300")
SIZE = 2


def wait_preparing(ws: Workspace) -> str:
    """Wait until the workspace's one session is PREPARING with every container made
    in Docker (read from the store, without reconciling); returns its id."""
    store = ws.store()
    seen: list[Any] = []

    def probe() -> str | None:
        sessions = store.list(include_ended=True)
        seen[:] = [(s.status, s.status_reason) for s in sessions]
        if not sessions:
            return None
        (session,) = sessions
        assert session.status in (SessionStatus.PENDING, SessionStatus.PREPARING), seen
        made = len(session_objects(session.id)[0]) == SIZE
        return session.id if session.status is SessionStatus.PREPARING and made else None

    try:
        return str(wait_for(probe, 120, "a PREPARING session with its containers", seen=seen.copy))
    finally:
        store.close()


def has_keys(ws: Workspace, session_id: str) -> bool:
    """Whether the store holds the session's key material."""
    store = ws.store()
    try:
        return store.load_keys(session_id) is not None
    finally:
        store.close()


def assert_accounted_for(ws: Workspace, session_id: str, pid: int) -> None:
    """``ls --all`` (which reconciles) shows the session ERROR because its driver
    ``pid`` exited; nothing of it is left in Docker or in the store's keys."""
    (listed,) = ws.json("ls", "--all")
    assert listed["id"] == session_id
    assert listed["status"] == "ERROR", listed
    assert listed["status_reason"] == f"the process launching it (pid {pid}) exited", listed
    assert [c["status"] for c in listed["containers"]] == ["TERMINATED"] * SIZE
    assert session_objects(session_id) == ([], [])
    assert not has_keys(ws, session_id)
    assert ws.json("agents")[0]["allocated"]["cpu"] == 0
    # ERROR stays listed until the user removes it; removing keeps why it failed.
    assert [s["status"] for s in ws.json("ls")] == ["ERROR"]
    (removed,) = ws.json("rm", session_id)
    assert removed["status"] == "TERMINATED", removed
    assert removed["status_reason"] == f"removed after an error: {listed['status_reason']}"
    assert ws.json("ls") == []


def test_a_killed_foreground_launch_ends_in_error_and_leaves_nothing(ws: Workspace) -> None:
    launch = ws.popen(*CLI, "launch", "--size", str(SIZE), *SMALL_FLAGS, *SLOW, "--json")
    try:
        session_id = wait_preparing(ws)
        assert ws.driver_pid(session_id) == launch.pid  # the CLI drives it
        assert has_keys(ws, session_id)
    finally:
        launch.kill()
        launch.communicate(timeout=30)
    assert launch.returncode == -signal.SIGKILL
    assert len(session_objects(session_id)[0]) == SIZE  # the crash cleaned nothing up
    assert_accounted_for(ws, session_id, launch.pid)


def test_a_killed_detached_driver_ends_in_error_and_leaves_nothing(ws: Workspace) -> None:
    session = ws.launch("--size", str(SIZE), *SMALL_FLAGS, *SLOW, "--no-wait")
    assert session["status"] in ("PENDING", "PREPARING"), session
    pid = ws.driver_pid(session["id"])
    assert pid and alive(pid)
    assert wait_preparing(ws) == session["id"]
    os.kill(pid, signal.SIGKILL)
    wait_for(lambda: not alive(pid), 10, f"the killed driver (pid {pid}) to end")
    assert len(session_objects(session["id"])[0]) == SIZE
    assert has_keys(ws, session["id"])
    assert_accounted_for(ws, session["id"], pid)
