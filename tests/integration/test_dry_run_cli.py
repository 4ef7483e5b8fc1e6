"""``jupyter cluster launch --dry-run``, as the README tells a user to ask before a launch:
it says on which agent each container would start, or why the launch would wait, in
the words the launch itself then meets, refuses what the launch would refuse, and
makes nothing in Docker or in the store.

The agent's capacity is set small with a ``jupyter_cluster_config.py`` in the
workspace, so that a second session does not fit while the first runs.
"""

from __future__ import annotations

import pytest

from .support import Workspace

pytestmark = pytest.mark.docker

SMALL_AGENT = 'c.ClusterManager.agents = [{"id": "local", "cpu": 2, "mem": "4g"}]\n'
HALF = ("--cpu", "1", "--mem", "256m")


def test_a_dry_run_says_where_or_why_and_makes_nothing(ws: Workspace) -> None:
    ws.write_config(SMALL_AGENT)
    before = ws.docker_objects()
    said = ws.ok_cli("launch", "--size", "2", *HALF, "--dry-run")
    assert said.stdout == "would start now on local: main1, sub1\n", str(said)
    assert ws.json("ls", "--all") == []
    assert ws.docker_objects() == before

    first = ws.launch("--size", "2", *HALF, "--name", "first")
    assert first["status"] == "RUNNING"
    check = ws.json("launch", "--size", "1", *HALF, "--dry-run")
    assert check["starts_now"] is False and check["placement"] == {}, check
    waiting = ws.launch("--size", "1", *HALF, "--name", "second", "--no-wait")
    assert waiting["status"] == "PENDING"
    assert check["reason"] == waiting["status_reason"], (check, waiting)
    assert "local has 0 CPU" in check["reason"], check

    behind = ws.ok_cli("launch", "--size", "1", *HALF, "--dry-run")
    assert behind.stdout.startswith("would wait (PENDING): 2nd in the queue"), str(behind)
    assert "(next: second)" in behind.stdout, str(behind)
    ws.ok_cli("rm", "second", "first")


def test_a_dry_run_refuses_what_the_launch_would_refuse(ws: Workspace) -> None:
    ws.write_config(SMALL_AGENT)
    big = ws.cli("launch", "--size", "3", *HALF, "--dry-run")
    assert big.returncode != 0
    assert "size: no agent of group 'default' can ever hold 3" in big.stderr, str(big)
    folder = ws.cli("launch", "--mount", "nowhere", "--dry-run")
    assert folder.returncode != 0 and "no data folder" in folder.stderr, str(folder)
    assert ws.json("ls", "--all") == []
    assert ws.docker_objects() == ([], [])
