"""``jupyter cluster rm`` in one terminal while ``jupyter cluster launch`` runs in another.

A user starts a launch whose bootstrap takes long, changes their mind and removes
the session from a second terminal. The launch must stop at once and say the
session was terminated (exit code 1), not report a start-up failure of its own or
warn about a clean-up that another process did; the history must show the session
TERMINATED by the user with every container TERMINATED; and nothing may be left in
Docker (containers, network, the start-up files' volume).
"""

from __future__ import annotations

import time

import pytest

from tests.support.constants import CLI, SMALL_FLAGS
from tests.support.docker import session_objects, session_volumes
from tests.support.waiting import wait_for

from .support import Workspace

pytestmark = pytest.mark.docker


def test_rm_from_another_terminal_stops_a_foreground_launch(ws: Workspace) -> None:
    launch = ws.popen(
        *CLI, "launch", "--size", "3", *SMALL_FLAGS, "--name", "train", "--bootstrap", "sleep 300"
    )
    try:
        shown: dict = {}

        def bootstrapping() -> bool:
            nonlocal shown
            result = ws.cli("show", "train", "--json")
            if result.returncode != 0:  # not submitted yet
                return False
            shown = ws.show("train")
            assert shown["status"] == "PREPARING", shown
            return all(c["status"] == "STARTING" for c in shown["containers"]) and bool(
                session_objects(shown["id"])[0]
            )

        wait_for(bootstrapping, 120, "every container to run its bootstrap", seen=lambda: shown)
        time.sleep(1)  # well into the bootstrap: every container has started
        removed = ws.json("rm", "train")
        assert [s["status"] for s in removed] == ["TERMINATED"], removed
        asked = time.monotonic()
        out, err = launch.communicate(timeout=60)
        took = time.monotonic() - asked
    finally:
        if launch.poll() is None:
            launch.kill()
            launch.communicate()
    assert took < 10, f"the launch went on for {took:.1f} s after the session was removed"
    assert launch.returncode == 1, (out, err)
    assert "session train: TERMINATED (terminated)" in err, err
    assert "failed" not in err and "WARNING" not in err, err  # no start-up failure, no noise
    ended = ws.show(shown["id"])
    assert ended["status"] == "TERMINATED" and ended["status_reason"] == "terminated", ended
    assert [c["status"] for c in ended["containers"]] == ["TERMINATED"] * 3, ended
    assert session_objects(shown["id"]) == ([], [])
    assert session_volumes(shown["id"]) == []
