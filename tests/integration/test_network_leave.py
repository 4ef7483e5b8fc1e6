"""On a Docker engine that can freeze when two containers of one network exit
together (before 20.10.27: Debian 12's docker.io among them), `jupyter cluster rm`
takes each container off the session network before it is killed, one at a time;
on a fixed engine the removal is as it was. So does the clean-up of a launch
cancelled while its subs' starts are still in Docker's hands. Told apart by Docker's
own events: a container that leaves its network before its ``kill`` event did so by
the engine's disconnect, one that leaves after it did so as it exited.
"""

from __future__ import annotations

import asyncio
import json
import time

import pytest

from jupyter_cluster.engine.agents.docker.agent import DockerAgent
from jupyter_cluster.engine.agents.docker.network_leave import deadlocks_on_leave
from tests.support.constants import SMALL_FLAGS
from tests.support.docker import docker, session_objects

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


def _times(events: list[dict], action: str, ids: set[str]) -> dict[str, int]:
    """When each of ``ids`` first had container event ``action`` (ns)."""
    found: dict[str, int] = {}
    for e in events:
        if e["Type"] == "container" and e["Action"] == action and e["Actor"]["ID"] in ids:
            found.setdefault(e["Actor"]["ID"], e["timeNano"])
    return found


def _left(events: list[dict], ids: set[str]) -> dict[str, int]:
    """When each of ``ids`` was disconnected from a network (ns)."""
    return {
        e["Actor"]["Attributes"]["container"]: e["timeNano"]
        for e in events
        if e["Type"] == "network"
        and e["Action"] == "disconnect"
        and e["Actor"]["Attributes"].get("container") in ids
    }


def _engine_can_freeze() -> bool:
    return deadlocks_on_leave(docker("version", "--format", "{{.Server.Version}}").stdout)


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
    killed = _times(events, "kill", set(ids))
    left = _left([e for e in events if e["Actor"]["ID"] == network_id], set(ids))
    assert set(killed) == set(left) == set(ids), (killed, left)
    before = {ids[c] for c in ids if left[c] < killed[c]}
    if _engine_can_freeze():
        assert before == set(ids.values())  # every host left before its kill
        # ... each in its turn among the store's processes, whose lock files are gone
        locks = ws.db_path.parent / "locks"
        assert locks.is_dir() and list(locks.iterdir()) == []
    else:
        assert before == set()  # unchanged: each left as it exited


async def test_a_launch_cancelled_while_its_subs_start_takes_them_off_first(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Docker answers an inspect only once a start it has received is done (both take
    the container's lock), so the clean-up sees a sub whose start was in flight as
    running, and takes it off the network before killing it."""
    real_start = DockerAgent.start_container
    starts: list[str] = []
    subs_asked = asyncio.Event()

    async def start(self: DockerAgent, container_id: str) -> None:
        starts.append(container_id)
        if len(starts) == 2:  # main1's start returned; the subs' are asked together
            subs_asked.set()
        await real_start(self, container_id)

    monkeypatch.setattr(DockerAgent, "start_container", start)
    manager = ws.manager()
    await manager.start()
    try:
        since = time.time()
        launch = asyncio.ensure_future(
            manager.launch(manager.make_spec(size=4, cpu=0.25, mem="256m"))
        )
        await asyncio.wait_for(subs_asked.wait(), 120)
        await asyncio.sleep(0.05)  # every sub's start on its way to Docker
        cancelled_at = time.time_ns()
        launch.cancel()
        with pytest.raises(asyncio.CancelledError):
            await launch
        (session,) = await manager.list(include_ended=True)
    finally:
        await manager.close()
    assert session_objects(session.id) == ([], [])
    events = _events(since - 1, time.time() + 1)
    ids = set(starts)
    started, killed = _times(events, "start", ids), _times(events, "kill", ids)
    # A sub whose start never reached Docker is removed unstarted: nothing to leave.
    assert len(ids) == 4 and set(killed) == set(started), (starts, started, killed)
    # The case this test is for: Docker finished some start after the cancel.
    assert any(t > cancelled_at for t in started.values()), (cancelled_at, started)
    left = _left(events, ids)
    assert set(left) == set(started), left
    before = {c for c in started if left[c] < killed[c]}
    assert before == (set(started) if _engine_can_freeze() else set())
