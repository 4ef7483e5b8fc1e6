"""On a Docker engine that can freeze when two containers of one network exit
together (before 20.10.27: Debian 12's docker.io among them), `jupyter cluster rm`
takes each container off the session network before it is killed, one at a time;
on a fixed engine the removal is as it was. Told apart by Docker's own events: a
container that leaves its network before its ``kill`` event did so by the engine's
disconnect, one that leaves after it did so as it exited.
"""

from __future__ import annotations

import json
import time

import pytest

from jupyter_cluster.engine.agents.docker.network_leave import deadlocks_on_leave
from tests.support.constants import SMALL_FLAGS
from tests.support.docker import docker

from .support import Workspace

pytestmark = pytest.mark.docker


def _events(since: float, until: float) -> list[dict]:
    """Docker's container and network events between two times (seconds)."""
    found = docker(
        "events",
        "--since", f"{since:.3f}", "--until", f"{until:.3f}",
        "--filter", "type=container", "--filter", "type=network",
        "--format", "{{json .}}",
    ).stdout  # fmt: skip
    return [json.loads(line) for line in found.splitlines() if line.strip()]


def test_rm_takes_each_container_off_its_network_before_killing_it(ws: Workspace) -> None:
    session = ws.launch("--size", "4", *SMALL_FLAGS, "--name", "leaving")
    ids = {c["container_id"]: c["host"] for c in session["containers"]}
    each = "{{range .NetworkSettings.Networks}}{{.NetworkID}} {{end}}"
    networks = {
        tuple(line.split()) for line in docker("inspect", "-f", each, *ids).stdout.splitlines()
    }
    assert len(networks) == 1 and len(next(iter(networks))) == 1, networks  # the session's
    network_id = next(iter(networks))[0]
    since = time.time()
    ws.ok_cli("rm", "leaving")
    events = _events(since - 1, time.time() + 1)
    killed = {
        e["Actor"]["ID"]: e["timeNano"]
        for e in events
        if e["Type"] == "container" and e["Action"] == "kill" and e["Actor"]["ID"] in ids
    }
    left = {
        e["Actor"]["Attributes"]["container"]: e["timeNano"]
        for e in events
        if e["Type"] == "network"
        and e["Action"] == "disconnect"
        and e["Actor"]["ID"] == network_id
        and e["Actor"]["Attributes"].get("container") in ids
    }
    assert set(killed) == set(left) == set(ids), (killed, left)
    version = docker("version", "--format", "{{.Server.Version}}").stdout.strip()
    before = {ids[c] for c in ids if left[c] < killed[c]}
    if deadlocks_on_leave(version):
        assert before == set(ids.values())  # every host left before its kill
    else:
        assert before == set()  # unchanged: each left as it exited
