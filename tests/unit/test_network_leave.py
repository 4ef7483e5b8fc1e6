"""Which Docker engines get their containers' departures one at a time per network,
and that those departures wait for each other only on the same network.

Docker before 20.10.27 can freeze when two containers of one network exit together
(see ``jupyter_cluster.engine.agents.docker.network_leave``); the real engine's side
is in ``tests/integration/test_network_leave.py``.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from jupyter_cluster.engine.agents.docker.connection import DockerConnection
from jupyter_cluster.engine.agents.docker.network_leave import (
    KeyedLocks,
    NetworkLeaving,
    deadlocks_on_leave,
)
from jupyter_cluster.engine.agents.registry import agent_configs
from jupyter_cluster.errors import AgentError


@pytest.mark.parametrize(
    ("version", "affected"),
    [
        ("20.10.24+dfsg1", True),  # Debian 12's docker.io
        ("20.10.26", True),
        ("20.10.27", False),
        ("20.10.21", True),
        ("19.03.15", True),
        ("18.09", True),
        ("17.03.2-ce", True),
        ("22.06.0-beta.0", False),
        ("23.0.1", False),
        ("26.1.5+dfsg1", False),
        ("4.9.3", False),  # Podman's own numbering: no libnetwork
        ("1.13.1", False),
        ("master-dockerproject-2024-01-01", False),
        ("", False),
    ],
)
def test_which_engines_can_freeze(version: str, affected: bool) -> None:
    assert deadlocks_on_leave(version) is affected


async def test_departures_on_one_network_wait_for_each_other() -> None:
    locks = KeyedLocks()
    inside: list[str] = []
    most = 0

    async def leave(network: str, name: str) -> None:
        nonlocal most
        async with locks.hold(network):
            inside.append(f"{network}:{name}")
            most = max(most, sum(1 for i in inside if i.startswith(f"{network}:")))
            await asyncio.sleep(0.01)
            inside.remove(f"{network}:{name}")

    await asyncio.gather(*(leave("jc-a", f"sub{i}") for i in range(5)))
    assert most == 1
    assert len(locks) == 0  # forgotten once nobody holds or waits


async def test_departures_on_other_networks_do_not_wait() -> None:
    locks = KeyedLocks()
    both = asyncio.Event()
    held = 0

    async def leave(network: str) -> None:
        nonlocal held
        async with locks.hold(network):
            held += 1
            if held == 2:
                both.set()
            await asyncio.wait_for(both.wait(), 2)  # would time out if they waited

    await asyncio.gather(leave("jc-a"), leave("jc-b"))
    assert len(locks) == 0


async def test_a_failed_departure_frees_its_network() -> None:
    locks = KeyedLocks()
    with pytest.raises(RuntimeError):
        async with locks.hold("jc-a"):
            raise RuntimeError("Docker said no")
    async with asyncio.timeout(1):
        async with locks.hold("jc-a"):
            pass
    assert len(locks) == 0


@pytest.mark.parametrize(("version", "told"), [("20.10.24+dfsg1", True), ("26.1.5", False)])
def test_an_engine_that_stops_answering_is_told_about_the_freeze_if_it_can_freeze(
    tmp_path: Path, version: str, told: bool
) -> None:
    [config] = agent_configs([{"id": "local", "cpu": 2, "mem": "4g"}], str(tmp_path))
    conn = DockerConnection(config)
    NetworkLeaving(conn).observe(version)  # as the agent's info reports it
    error = str(conn.failure("removing container 0123456789ab", asyncio.TimeoutError()))
    assert "did not answer within" in error
    assert ("restart dockerd there" in error) is told
    assert ("moby/moby#42545" in error) is told


class _Container:
    async def show(self) -> dict[str, Any]:  # never awaited: the stub answers
        return {}


class _Client:
    """Enough of aiodocker's client for the requests to be made (not sent)."""

    class containers:
        @staticmethod
        def container(container_id: str) -> _Container:
            return _Container()


class _Engine:
    """A DockerConnection's ``call`` answering as a 20.10.24 engine whose session
    containers each run on network ``n1``; disconnects take 10 ms, or with
    ``frozen`` time out as a frozen engine's calls do."""

    def __init__(self, frozen: bool = False) -> None:
        self.client, self.frozen = _Client(), frozen
        self.unavailable: tuple[str, float] | None = None
        self.may_freeze = False
        self.disconnects = self.inside = self.most = 0

    async def call(self, action: str, request: Any, **_: Any) -> Any:
        request.close()  # a coroutine of aiodocker's: made, never sent
        if action.startswith("inspecting"):
            networks = {"jc-s": {"NetworkID": "n1"}}
            return {"State": {"Running": True}, "NetworkSettings": {"Networks": networks}}
        assert action.startswith("disconnecting"), action
        self.disconnects += 1
        if self.frozen:
            self.unavailable = ("did not answer", 0.0)
            raise AgentError("agent local is unavailable: did not answer", "local")
        self.inside += 1
        self.most = max(self.most, self.inside)
        await asyncio.sleep(0.01)
        self.inside -= 1
        return None


async def test_each_container_leaves_once_and_one_at_a_time() -> None:
    engine = _Engine()
    leaving = NetworkLeaving(engine)  # type: ignore[arg-type]
    leaving.observe("20.10.24+dfsg1")
    await asyncio.gather(*(leaving.leave_networks(f"sub{i}") for i in range(4)))
    assert (engine.disconnects, engine.most) == (4, 1)


async def test_a_frozen_engine_is_waited_for_once_not_once_per_container() -> None:
    engine = _Engine(frozen=True)
    leaving = NetworkLeaving(engine)  # type: ignore[arg-type]
    leaving.observe("20.10.24+dfsg1")
    await asyncio.gather(*(leaving.leave_networks(f"sub{i}") for i in range(4)))
    assert engine.disconnects == 1  # the others go straight on to their removal


async def test_a_fixed_engine_is_asked_nothing() -> None:
    engine = _Engine()
    leaving = NetworkLeaving(engine)  # type: ignore[arg-type]
    leaving.observe("26.1.5")
    await asyncio.gather(*(leaving.leave_networks(f"sub{i}") for i in range(4)))
    assert engine.disconnects == 0


@pytest.mark.parametrize("lock_dir", [True, False])
async def test_two_processes_of_one_store_take_their_departures_in_turn(
    tmp_path: Path, lock_dir: bool
) -> None:
    """Two NetworkLeaving objects stand for two engine processes (each its own
    in-process locks); only the store's lock directory makes them take turns."""
    engine = _Engine()
    shared = str(tmp_path / "locks") if lock_dir else ""
    first, second = (NetworkLeaving(engine, shared) for _ in range(2))  # type: ignore[arg-type]
    for leaving in (first, second):
        leaving.observe("20.10.24+dfsg1")
    await asyncio.gather(
        *(leaving.leave_networks(f"sub{i}") for i in range(3) for leaving in (first, second))
    )
    assert engine.disconnects == 6
    assert engine.most == (1 if lock_dir else 2)
    if lock_dir:
        assert list((tmp_path / "locks").iterdir()) == []  # each holder removed its file


async def test_a_stuck_holder_in_another_process_is_waited_for_once_per_network(
    tmp_path: Path,
) -> None:
    """A process that holds a network's lock for good (stopped, say) costs a
    teardown one wait of ``lock_wait``, not one per container; the departures still
    go on one at a time."""
    locks = tmp_path / "locks"
    locks.mkdir(mode=0o700)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_FOREVER, str(locks / "network-n1.lock")],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        engine = _Engine()
        leaving = NetworkLeaving(engine, str(locks), lock_wait=1.0)  # type: ignore[arg-type]
        leaving.observe("20.10.24+dfsg1")
        begin = time.monotonic()
        await asyncio.gather(*(leaving.leave_networks(f"sub{i}") for i in range(4)))
        took = time.monotonic() - begin
    finally:
        holder.kill()
        holder.wait(10)
    assert (engine.disconnects, engine.most) == (4, 1)
    assert 1.0 <= took < 2.5  # one wait of 1 s; four would be 4 s
    assert leaving.without_file_lock == {"n1"}


#: Locks ``argv[1]`` as the file lock does, says so, and holds it until killed.
HOLD_FOREVER = """
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)
fcntl.flock(fd, fcntl.LOCK_EX)
print("held", flush=True)
time.sleep(600)
"""
