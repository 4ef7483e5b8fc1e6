"""``ls``, ``show`` and ``agents`` on real Docker: answered from the store while Docker
agrees with it, by the engine (which reconciles first) as soon as it does not.

The fast path (``jupyter_cluster/cli/quick.py``) loads no Docker client, so which
path answered shows in what the command imported (``python -X importtime`` lists
every module on stderr): aiodocker means the engine ran. A session whose container
is killed or removed behind the engine's back must still be reported degraded, and
a container of no session must still be removed.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from jupyter_cluster.core import naming
from tests.support.constants import IMAGE
from tests.support.docker import docker
from tests.support.processes import run

from .support import Workspace

SMALL = ("--cpu", "0.5", "--mem", "256m")


def listing(ws: Workspace, *args: str) -> tuple[Any, bool]:
    """``jupyter cluster ARGS --json`` in ``ws``: its answer, and whether the engine
    (and so the Docker client) was loaded to give it."""
    command = (sys.executable, "-X", "importtime", "-m", "jupyter_cluster.cli", *args, "--json")
    result = run(command, env=ws.env, cwd=ws.root, timeout=180)
    assert result.returncode == 0, str(result)
    engine = any(line.split("|")[-1].strip() == "aiodocker" for line in result.stderr.splitlines())
    return json.loads(result.stdout), engine


def test_a_consistent_store_is_read_without_the_engine_and_a_dead_container_is_not(
    ws: Workspace,
) -> None:
    session = ws.launch("--name", "quick", *SMALL)
    assert session["status"] == "RUNNING"
    sid = session["id"]
    container = session["containers"][0]["container_id"]

    listed, engine = listing(ws, "ls")
    assert [(s["id"], s["status"]) for s in listed] == [(sid, "RUNNING")]
    assert not engine, "ls loaded the engine though Docker agrees with the store"
    shown, engine = listing(ws, "show", "quick")
    assert (shown["id"], shown["status"], engine) == (sid, "RUNNING", False)
    [agent], engine = listing(ws, "agents")
    assert (agent["id"], agent["reachable"], engine) == ("local", True, False)
    assert agent["allocated"]["cpu"] == 0.5

    docker("kill", container)  # behind the engine's back
    listed, engine = listing(ws, "ls")
    assert [(s["id"], s["status"]) for s in listed] == [(sid, "RUNNING_DEGRADED")]
    assert engine, "the engine must reconcile a session whose container died"
    assert "main1" in listed[0]["status_reason"], listed
    shown, engine = listing(ws, "show", sid)
    assert (shown["status"], engine) == ("RUNNING_DEGRADED", True)

    docker("rm", "-f", container)
    listed, engine = listing(ws, "ls")
    assert [(s["id"], s["status"]) for s in listed] == [(sid, "RUNNING_DEGRADED")]
    assert "main1 is gone" in listed[0]["status_reason"], listed
    assert engine

    ws.ok_cli("rm", sid)
    listed, engine = listing(ws, "ls")
    assert (listed, engine) == ([], False)
    [ended], engine = listing(ws, "ls", "--all")
    assert (ended["id"], ended["status"], engine) == (sid, "TERMINATED", False)


def test_a_container_of_no_session_is_removed_by_the_engine(ws: Workspace) -> None:
    listed, engine = listing(ws, "ls")
    assert (listed, engine) == ([], False)
    label = f"{naming.LABEL_MANAGER}={ws.manager_id}"
    stray = docker("run", "-d", "--label", label, "--entrypoint", "sleep", IMAGE, "300")
    stray_id = stray.stdout.strip()
    try:
        listed, engine = listing(ws, "ls")
        assert (listed, engine) == ([], True)
        assert ws.docker_objects() == ([], []), "the orphan was not removed"
        listed, engine = listing(ws, "ls")
        assert (listed, engine) == ([], False)
    finally:
        docker("rm", "-f", stray_id, check=False)


def test_logs_are_read_without_the_engine_as_docker_has_them(ws: Workspace) -> None:
    bootstrap = "seq 5000; printf 'caf\\303\\251\\n'"
    session = ws.launch("--name", "quicklog", *SMALL, "--bootstrap", bootstrap)
    container = session["containers"][0]["container_id"]
    try:
        command = (sys.executable, "-X", "importtime", "-m", "jupyter_cluster.cli", "logs")
        result = run((*command, "quicklog", "main1"), env=ws.env, cwd=ws.root, timeout=180)
        assert result.returncode == 0, str(result)
        assert "aiodocker" not in result.stderr, "logs loaded the engine with nothing to reconcile"
        lines = result.stdout.splitlines()
        theirs = docker("logs", container).stdout.splitlines()
        assert len(lines) == len(theirs) and sorted(lines) == sorted(theirs)
        numbers = [line for line in lines if line.isdigit()]
        # sshd and the start-up script write to the same log meanwhile: a number may
        # share its line with their output (in Docker's log too), never go missing.
        shared = "\n".join(line for line in lines if not line.isdigit())
        missing = [n for n in range(1, 5001) if str(n) not in numbers]
        assert all(str(n) in shared for n in missing), missing
        assert len(missing) <= 3 and numbers == sorted(numbers, key=int), missing
        assert "café" in lines, lines[-5:]
        tail = ws.ok_cli("logs", "quicklog", "main1", "--tail", "3").stdout
        assert tail.splitlines() == theirs[-3:]
    finally:
        ws.ok_cli("rm", session["id"])
    ended = ws.ok_cli("logs", "quicklog", "main1").stdout  # the kept copy, by the engine
    assert "5000" in ended.splitlines()
