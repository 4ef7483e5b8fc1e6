"""Load: 20 launches at once through REST, the CLI and the kernel provisioner, room for 4.

One real Jupyter server whose only agent (the local Docker engine) is configured
with room for exactly four small sessions. The server, the CLI subprocesses and
the provisioner (run by the server's kernel manager) share one config file and
one store. Twenty callers start together: REST clients, waiting CLI launches,
``--no-wait`` CLI launches (a detached driver brings them up) and kernels. Each
holds its session briefly once it is RUNNING and then ends it; two REST callers
instead cancel theirs while it is still PENDING, and one CLI caller removes its
own right after ``launch --no-wait`` (cancelled if it still waits). Meanwhile
samplers watch, independently of each other: the store file (booked resources and
live sessions never exceed the agent), ``GET agents`` (allocated never above
capacity), Docker itself (never more than four sessions' containers running) and
the latency of ``GET sessions`` (the server stays responsive). At the end every
session has ended as its caller asked, and no container, network, kernel, CLI or
driver process is left.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import os
import sqlite3
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import yarl

from tests.support.constants import CLI, LABEL_MANAGER, LABEL_SESSION, MIB, SMALL_BODY
from tests.support.docker import docker, manager_objects
from tests.support.waiting import eventually

from .support import EventStream, Fetch, call, jp_async, ok_http, stream_url

#: In the serial phase: the latency bound is about the server under this storm, and
#: the suite's other workers beside it once stalled a ``GET sessions`` for 1.75 s
#: (191-210 ms at most when run alone).
pytestmark = [pytest.mark.docker, pytest.mark.serial]

#: Sessions of SMALL_BODY's size that fit on the agent at once.
ROOM = 4
#: What each session asks for (SMALL_BODY, the server's default launch options).
CPU, MEM = 0.25, 256 * MIB
#: The agent: room for exactly ROOM small sessions, in CPU and in memory.
AGENT = {"id": "local", "cpu": ROOM * CPU, "mem": f"{ROOM * 256}m"}
#: States in which a session holds resources on its agent.
ALLOCATING = {"PREPARING", "RUNNING", "RUNNING_DEGRADED", "TERMINATING"}
#: Sessions waiting for room before a canceller launches: its session must stay
#: PENDING (the queue is first in, first out) until it is cancelled.
QUEUE_AHEAD = 6
#: The whole storm must end within this (the test's budget is three minutes).
STORM_TIMEOUT = 150.0
SAMPLE_INTERVAL = 0.2
MAX_LATENCY = 1.0
_IN_ALLOCATING = ", ".join(f"'{status}'" for status in sorted(ALLOCATING))
#: CPU and memory booked on an agent by the containers of sessions holding resources,
#: the number of those sessions and of waiting ones: one statement, one snapshot.
STORE_SAMPLE = f"""
SELECT
  (SELECT COALESCE(SUM(json_extract(s.record, '$.resources.cpu')), 0)
     FROM containers c JOIN sessions s ON s.id = c.session_id
     WHERE c.agent = ?1 AND s.status IN ({_IN_ALLOCATING})),
  (SELECT COALESCE(SUM(json_extract(s.record, '$.resources.mem')), 0)
     FROM containers c JOIN sessions s ON s.id = c.session_id
     WHERE c.agent = ?1 AND s.status IN ({_IN_ALLOCATING})),
  (SELECT COUNT(*) FROM sessions WHERE status IN ({_IN_ALLOCATING})),
  (SELECT COUNT(*) FROM sessions WHERE status = 'PENDING')
"""
#: The CLI's launch flags for the same size.
FLAGS = ("--cpu", str(CPU), "--mem", "256m")


@pytest.fixture
def cluster_config(jp_config_dir: Path) -> dict[str, Any]:
    """The agent with room for ROOM sessions, for the server and (through the config
    file in the test's Jupyter config dir) the CLI and the provisioner."""
    config = {
        "ClusterManager": {"agents": [AGENT], "pending_poll_interval": SAMPLE_INTERVAL},
        "ClusterApp": {"max_sessions_per_user": 0, "default_launch_options": SMALL_BODY},
    }
    (jp_config_dir / "jupyter_cluster_config.json").write_text(json.dumps(config))
    return config


async def cli(*args: str) -> Any:
    """``jupyter cluster ARGS`` with this test's Jupyter environment; asserts exit code 0
    and returns the JSON it printed (None without ``--json``).

    The CLI runs at a lower CPU priority (nice 10): eight Python start-ups at once
    would otherwise keep the server's thread waiting for a CPU on a 2-core machine,
    and the latency bound is about the server, not about the scheduler."""
    proc = await asyncio.create_subprocess_exec(
        *CLI,
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=dict(os.environ),
        preexec_fn=functools.partial(os.nice, 10),
    )
    try:
        out, err = await asyncio.wait_for(proc.communicate(), STORM_TIMEOUT)
    finally:
        if proc.returncode is None:  # cancelled: the storm failed elsewhere
            proc.kill()
            await proc.wait()
    assert proc.returncode == 0, f"jupyter cluster {' '.join(args)}: {err.decode()}"
    return json.loads(out) if "--json" in args else None


# -- what the samplers saw ------------------------------------------------------------


@dataclass
class Watch:
    """The peaks the samplers saw, and every sample that broke a limit."""

    max_cpu: float = 0.0
    max_mem: int = 0
    max_live: int = 0
    max_pending: int = 0
    max_docker_sessions: int = 0
    max_latency: float = 0.0
    latencies: int = 0
    #: The latest store sample: sessions holding resources, sessions waiting.
    live_now: int = 0
    pending_now: int = 0
    broken: list[str] = field(default_factory=list)
    stop: asyncio.Event = field(default_factory=asyncio.Event)
    started: float = field(default_factory=time.monotonic)

    async def every(
        self, sample: Callable[[], Awaitable[None]], interval: float = SAMPLE_INTERVAL
    ) -> None:
        """Run ``sample`` every ``interval`` seconds until the storm is over."""
        while not self.stop.is_set():
            await sample()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self.stop.wait(), interval)

    def store_sample(self, db: sqlite3.Connection) -> None:
        """Booked resources, live and waiting sessions, as the store has them (one
        consistent read of its tables)."""
        cpu, mem, live, pending = db.execute(STORE_SAMPLE, (AGENT["id"],)).fetchone()
        self.live_now, self.pending_now = live, pending
        self.max_cpu, self.max_mem = max(self.max_cpu, cpu), max(self.max_mem, mem)
        self.max_live = max(self.max_live, live)
        self.max_pending = max(self.max_pending, pending)
        if cpu > ROOM * CPU + 1e-9 or mem > ROOM * MEM or live > ROOM:
            self.broken.append(f"store: {live} sessions live, {cpu} CPU and {mem} B booked")

    def docker_sample(self, manager_id: str) -> None:
        """Session containers that Docker runs now (the independent witness)."""
        label = '{{.Label "' + LABEL_SESSION + '"}}'
        out = docker("ps", "--filter", f"label={LABEL_MANAGER}={manager_id}", "--format", label)
        running = out.stdout.split()
        self.max_docker_sessions = max(self.max_docker_sessions, len(set(running)))
        if len(running) > ROOM:  # size-1 sessions: one container each
            self.broken.append(f"docker: {len(running)} session containers run: {running}")

    def agents_sample(self, agents: list[dict[str, Any]]) -> None:
        """What ``GET agents`` reports: never more allocated than the capacity."""
        (agent,) = agents
        if agent["allocated"]["cpu"] > agent["capacity"]["cpu"] + 1e-9 or (
            agent["allocated"]["mem"] > agent["capacity"]["mem"]
        ):
            self.broken.append(f"GET agents: {agent}")

    def latency_sample(self, seconds: float) -> None:
        """One ``GET sessions`` round trip."""
        self.max_latency = max(self.max_latency, seconds)
        self.latencies += 1
        if seconds >= MAX_LATENCY:
            at = time.monotonic() - self.started
            self.broken.append(f"GET sessions took {seconds:.2f} s (at {at:.1f} s)")


# -- the callers ----------------------------------------------------------------------


async def settled(events: EventStream, sid: str) -> str:
    """The status of session ``sid`` once it has left PENDING and PREPARING (from the
    server's events stream, which also reports sessions of other processes)."""
    event = await events.wait_for(
        lambda name, data: (
            name == "session"
            and data["session_id"] == sid
            and data["status"] not in ("PENDING", "PREPARING")
        ),
        STORM_TIMEOUT,
        f"session {sid} to leave PENDING and PREPARING",
    )
    return str(event["status"])


async def queue_is_deep(watch: Watch) -> None:
    """Wait until the store shows the agent full and QUEUE_AHEAD sessions waiting."""

    async def probe() -> bool:
        return watch.live_now == ROOM and watch.pending_now >= QUEUE_AHEAD

    await eventually(probe, STORM_TIMEOUT, f"a full agent and {QUEUE_AHEAD} sessions waiting")


def hold_for(i: int) -> float:
    """How long caller ``i`` keeps its RUNNING session: 1 to 2 s."""
    return 1.0 + (i % 3) / 2


@dataclass
class Storm:
    """What the callers use: the server's REST API (``fetch`` for short requests,
    ``http`` for kernel starts that may wait minutes), its events, the samplers."""

    fetch: Fetch
    http: aiohttp.ClientSession
    url: Callable[..., yarl.URL]
    events: EventStream
    watch: Watch
    app: Any


async def rest_user(storm: Storm, i: int) -> tuple[str, str]:
    """POST a session, hold it once RUNNING, DELETE it."""
    sid = (await ok_http(storm.fetch, "sessions", method="POST", body=SMALL_BODY))["id"]
    assert await settled(storm.events, sid) == "RUNNING"
    await asyncio.sleep(hold_for(i))
    await ok_http(storm.fetch, "sessions", sid, method="DELETE")
    return sid, "TERMINATED"


async def rest_canceller(storm: Storm) -> tuple[str, str]:
    """POST a session behind a deep queue and DELETE it while it is PENDING."""
    await queue_is_deep(storm.watch)
    session = await ok_http(storm.fetch, "sessions", method="POST", body=SMALL_BODY)
    assert session["status"] == "PENDING", session
    code, data, _ = await call(storm.fetch, "sessions", session["id"], method="DELETE")
    assert code == 204, data
    return session["id"], "CANCELLED"


async def cli_user(storm: Storm, i: int) -> tuple[str, str]:
    """``launch --json`` (waits until RUNNING), hold it, ``rm`` it."""
    session = await cli("launch", *FLAGS, "--json")
    assert session is not None and session["status"] == "RUNNING", session
    await asyncio.sleep(hold_for(i))
    await cli("rm", session["id"])
    return session["id"], "TERMINATED"


async def cli_detached_user(storm: Storm, i: int) -> tuple[str, str]:
    """``launch --no-wait`` (a detached driver launches it), hold it once RUNNING, ``rm``."""
    session = await cli("launch", *FLAGS, "--no-wait", "--json")
    assert session is not None
    assert await settled(storm.events, session["id"]) == "RUNNING"
    await asyncio.sleep(hold_for(i))
    await cli("rm", session["id"])
    return session["id"], "TERMINATED"


async def cli_canceller(storm: Storm) -> tuple[str, str]:
    """``launch --no-wait`` behind a deep queue, then ``rm``: it cancels the session if
    it still waits, else terminates it. Between the two lies a Python start-up at low
    priority, long enough for the queue to move on a busy machine, so what ``rm``
    reports is what the session must end as (the REST cancellers are the ones sure
    to cancel)."""
    await queue_is_deep(storm.watch)
    session = await cli("launch", *FLAGS, "--no-wait", "--json")
    # Queued behind the others; or, if the queue moved on during the CLI's start-up
    # on a busy machine, placed already (--no-wait returns before it runs).
    assert session is not None and session["status"] in ("PENDING", "PREPARING"), session
    ended = await cli("rm", session["id"], "--json")
    assert isinstance(ended, list) and len(ended) == 1, ended
    assert ended[0]["status"] in ("CANCELLED", "TERMINATED"), ended
    return session["id"], ended[0]["status"]


async def kernel_user(storm: Storm, i: int) -> tuple[str, str]:
    """Start a kernel of the server's session kernelspec (its provisioner launches a
    session and returns once it is RUNNING), hold it, shut it down (which terminates
    the session)."""
    body = {"name": storm.app.kernel_name}
    async with storm.http.post(storm.url("api", "kernels"), json=body) as response:
        assert response.status == 201, await response.text()
        kid = (await response.json())["id"]
    sid = storm.app.kernel_manager.get_kernel(kid).provisioner.session_id
    assert (await ok_http(storm.fetch, "sessions", sid))["status"] == "RUNNING"
    await asyncio.sleep(hold_for(i))
    async with storm.http.delete(storm.url("api", "kernels", kid)) as response:
        assert response.status == 204, await response.text()
    return sid, "TERMINATED"


# -- leftovers ----------------------------------------------------------------------


def processes_with(data_dir: Path) -> list[str]:
    """Command lines of other processes running with this test's Jupyter data dir (the
    CLI, detached drivers, local kernels): none may outlive the storm."""
    needle = f"\0JUPYTER_DATA_DIR={data_dir}\0".encode()
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        if int(pid) == os.getpid():
            continue
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                if needle not in b"\0" + f.read() + b"\0":
                    continue
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                found.append(f.read().replace(b"\0", b" ").decode(errors="replace"))
        except OSError:  # it exited meanwhile
            continue
    return found


# -- the test -------------------------------------------------------------------------


@jp_async
async def test_twenty_launches_against_room_for_four(
    jp_fetch: Any,
    jp_http_port: int,
    jp_base_url: str,
    jp_auth_header: Any,
    jp_data_dir: Path,
    cluster: Any,
) -> None:
    assert SMALL_BODY == {"cpu": CPU, "mem": "256m"}  # the kernelspec's size too
    manager_id = cluster.engine.store.manager_id
    url = functools.partial(stream_url, jp_http_port, jp_base_url)
    watch = Watch()
    # The store file read on its own connection (read-only, through SQLite: a second
    # Store in this process would open and close the file itself, see the report).
    db_uri = Path(cluster.engine.db_path).as_uri() + "?mode=ro"
    db = sqlite3.connect(db_uri, uri=True, check_same_thread=False)

    async def latency(http: aiohttp.ClientSession) -> None:
        start = time.monotonic()
        async with http.get(url("cluster", "api", "sessions")) as response:
            assert response.status == 200, await response.text()
            await response.read()
        watch.latency_sample(time.monotonic() - start)

    async def agents() -> None:
        watch.agents_sample(await ok_http(jp_fetch, "agents"))

    timeout = aiohttp.ClientTimeout(total=STORM_TIMEOUT)
    async with (
        aiohttp.ClientSession(headers=jp_auth_header, timeout=timeout) as http,
        EventStream(url("cluster", "api", "events"), jp_auth_header) as events,
    ):
        samplers = [
            watch.every(lambda: latency(http)),
            watch.every(lambda: asyncio.to_thread(watch.store_sample, db)),
            watch.every(lambda: asyncio.to_thread(watch.docker_sample, manager_id)),
            watch.every(agents, interval=1.0),
        ]
        sampling = asyncio.gather(*samplers)
        storm = Storm(jp_fetch, http, url, events, watch, cluster)
        callers = [
            *(rest_user(storm, i) for i in range(6)),
            *(rest_canceller(storm) for _ in range(2)),
            *(cli_user(storm, i) for i in range(6)),
            cli_detached_user(storm, 0),
            cli_canceller(storm),
            *(kernel_user(storm, i) for i in range(4)),
        ]
        assert len(callers) == 20
        started = time.monotonic()
        try:
            outcomes = await asyncio.wait_for(asyncio.gather(*callers), STORM_TIMEOUT)
        finally:
            took = time.monotonic() - started
            watch.stop.set()
            await sampling
            db.close()

    print(
        f"\nload: 20 launches (room for {ROOM}) in {took:.1f} s; at most {watch.max_live} "
        f"sessions live (store), {watch.max_docker_sessions} running (Docker), "
        f"{watch.max_pending} pending; booked at most {watch.max_cpu:g} CPU / "
        f"{watch.max_mem // MIB} MiB of {AGENT['cpu']:g} / {AGENT['mem']}; GET sessions "
        f"at most {watch.max_latency * 1000:.0f} ms over {watch.latencies} requests"
    )
    assert not watch.broken, "\n".join(watch.broken)
    # The storm really filled the agent and queued the rest.
    assert watch.max_live == ROOM and watch.max_docker_sessions == ROOM
    assert watch.max_pending >= QUEUE_AHEAD

    # Every session ended as its caller asked; the history holds exactly these 20.
    expected = dict(outcomes)
    assert len(expected) == 20
    wrong: list[str] = []

    async def ended() -> bool:
        nonlocal wrong
        history = await ok_http(jp_fetch, "sessions", params={"all": "1"})
        wrong = [
            f"{s['id']} is {s['status']} ({s['status_reason']}), not {expected.get(s['id'])}"
            for s in history
            if s["status"] != expected.get(s["id"])
        ]
        return not wrong and len(history) == len(expected)

    await eventually(ended, 30, "every session to end as its caller asked", seen=lambda: wrong)
    assert await ok_http(jp_fetch, "kernels", base=("api",)) == []
    assert manager_objects(manager_id) == ([], [])

    async def no_processes() -> bool:
        return not await asyncio.to_thread(processes_with, jp_data_dir)

    what = "the CLI and driver processes to exit"
    await eventually(no_processes, 30, what, seen=lambda: processes_with(jp_data_dir))
