"""Ctrl-C on ``jupyter cluster launch`` while the session is being prepared.

A user presses Ctrl-C when a launch hangs, typically in a bootstrap command that
takes too long. The CLI must end with one line saying the launch was cancelled,
remove everything the launch made, and keep what the containers printed, so that
``jupyter cluster logs`` shows where it hung; the history must say the launch was
interrupted. Before, the logs were lost (the launch's clean-up removed the containers
without keeping them, and the termination after it warned "could not keep the log
… No such container" on the user's terminal), and the session ended "terminated".
"""

from __future__ import annotations

from jupyter_cluster.core.state import LAUNCH_INTERRUPTED
from tests.support.constants import CLI
from tests.support.docker import docker
from tests.support.processes import as_from_a_terminal, ctrl_c
from tests.support.waiting import wait_for

from .support import Workspace

SMALL = ("--size", "2", "--cpu", "0.25", "--mem", "256m")
BOOTSTRAP = "echo fetching the wheels; sleep 120"


def test_ctrl_c_on_a_hanging_launch_removes_it_and_keeps_its_logs(ws: Workspace) -> None:
    launching = (*CLI, "launch", *SMALL, "--name", "slow", "--bootstrap", BOOTSTRAP)
    with as_from_a_terminal(launching, env=ws.env, cwd=ws.root) as launch:
        wait_for(lambda: _printed_by_both(ws), 120, "both containers to run the bootstrap")
        out, err = ctrl_c(launch)
    assert launch.returncode == 130, (out, err)
    said = [line for line in err.splitlines() if not line.startswith("slow: PREPARING")]
    assert said == [
        "jupyter cluster: interrupted; the launch was cancelled and what it had made removed"
    ], err
    assert ws.docker_objects() == ([], [])
    ended = ws.show("slow")
    assert (ended["status"], ended["status_reason"]) == ("TERMINATED", LAUNCH_INTERRUPTED)
    for host in ("main1", "sub1"):
        logs = ws.ok_cli("logs", "slow", host).stdout
        assert "jupyter-cluster: running the bootstrap command\nfetching the wheels\n" in logs


def _printed_by_both(ws: Workspace) -> bool:
    containers, _ = ws.docker_objects()
    if len(containers) != 2:
        return False
    return all("fetching the wheels" in docker("logs", c, check=False).stdout for c in containers)
