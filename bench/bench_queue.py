"""The whole scheduling path at scale: 10,000 waiting sessions of 50 owners, 1,000 agents.

Run as ``.venv/bin/python bench/bench_queue.py [--repeat 3] [--quick] [--order fair-share]``.

Set-up (not timed): a :class:`~jupyter_cluster.engine.manager.ClusterManager` on a
real SQLite store in a temporary folder, with 1,000 fake agents
(:class:`~jupyter_cluster.engine.agents.fake.FakeAgent`, the sizes of
``bench/common/scheduler_workload.py``: 4 to 64 CPUs, a tenth with 4 GPUs in a
``gpu`` group) and 10,000 sessions of that workload's shapes recorded PENDING as
``submit`` records them (owners drawn from 50, one after another), so demand is
above capacity and part of the queue keeps waiting. Then, per run:

place the queue
    ours: the engine's scheduling loop (``launcher.queue``, started as a server
    starts it) from its start until its first pass has placed everything that fits
    (a second pass is checked to place nothing more): reading the queue and what
    agents hold, ordering it (``--order``, default fair share), placing it, writing
    every placement and every waiting reason, in one write transaction.
    floor: the pure :func:`~jupyter_cluster.core.queue.place_queue` on the same
    sessions and agents in memory (what no store, order or reason costs).
``GET sessions`` of one user while the queue is full
    ours: ``ClusterManager.page("active", 50, owner=…)`` (what the handler calls)
    on the event loop while the loop keeps passing over the full queue every
    ``--poll`` seconds; waiting for a pass in progress counts.
    floor: the same page read with one bare SQL query on a connection of its own.
a new launch's placement while the queue is full
    ours: one running session ends, then a new owner's launch: ``submit`` until it
    is PREPARING (validation, insert, and its placement: alone, as fair share puts
    a newcomer first; see ``engine/store/placing_first.py``). The loop is held back
    from the termination until then, else its pass would give the room to the
    queue first; a launch that arrives during a pass waits for it.
    floor: inserting that session and the pure ``place()`` of it (one row written,
    one decision).

Goals (issue #26, item 3): everything placed in under 5 s, ``GET sessions`` under
50 ms, a new placement under 100 ms (each a median). No Docker: nothing is made
outside the temporary folder.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from typing import Any

from common import harness
from common import scheduler_workload as workload

from jupyter_cluster.core import naming
from jupyter_cluster.core.models import Session
from jupyter_cluster.core.queue import place_queue
from jupyter_cluster.core.scheduler import place
from jupyter_cluster.core.state import LISTINGS, SessionStatus
from jupyter_cluster.engine.agents.fake import FakeAgent
from jupyter_cluster.engine.manager import ClusterManager
from jupyter_cluster.engine.store.rows import status_in

NAME = "queue"
IMAGE = "jupyter-cluster/kernel"
GOALS = {"place": 5.0, "list": 0.050, "launch": 0.100}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options (``--quick``: 1,000 sessions of 10 owners on 100 agents)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, help="runs of each kind (default 3)")
    parser.add_argument("--quick", action="store_true", help="small sizes, one run each")
    parser.add_argument("--order", default="fair-share", help="fifo, priority or fair-share")
    parser.add_argument("--poll", type=float, default=1.0, help="the loop's poll interval (s)")
    parser.add_argument(
        "--no-backfill",
        dest="backfill",
        action="store_false",
        help="strict order: a group's queue stops at its first waiting session",
    )
    args = parser.parse_args(argv)
    args.repeat = args.repeat or (1 if args.quick else 3)
    args.sessions, args.agents, args.owners = (1000, 100, 10) if args.quick else (10000, 1000, 50)
    return args


def make_manager(folder: str, agents: int, args: argparse.Namespace) -> ClusterManager:
    """A manager on ``agents`` fake agents shaped as the scheduler workload's."""
    fakes = {
        slot.id: FakeAgent(
            slot.id,
            resource_group=slot.resource_group,
            cpu=slot.capacity.cpu,
            mem=slot.capacity.mem,
            gpus=slot.gpu_ids,
            images=(IMAGE,),
            ready_on_start=True,
        )
        for slot in workload.make_agents(agents)
    }
    return ClusterManager(
        db_path=f"{folder}/cluster.db",
        data_root=f"{folder}/folders",
        agents=[
            {"id": a.config.id, "resource_group": a.config.resource_group} for a in fakes.values()
        ],
        agent_factory=lambda config: fakes[config.id],
        queue_order=args.order,
        pending_backfill=args.backfill,
        pending_poll_interval=args.poll,
        default_image=IMAGE,
    )


def fill(manager: ClusterManager, count: int, owners: int) -> list[Session]:
    """``count`` sessions recorded PENDING as ``submit`` records them."""
    rng = random.Random(3)
    now = time.time()
    sessions = []
    for i, spec in enumerate(workload.make_queue(count)):
        sid = f"s{i:06}-{rng.getrandbits(32):08x}"
        session = Session(
            id=sid,
            spec=spec,
            status=SessionStatus.PENDING,
            containers=naming.plan_containers(sid, spec.size),
            created_at=now + i * 1e-4,
            updated_at=now,
            owner=f"user{rng.randrange(owners):02}",
        )
        manager.store.insert_session(session)
        sessions.append(session)
    return sessions


async def place_all(manager: ClusterManager) -> tuple[float, int]:
    """The loop from its start to its first pass's end; seconds and sessions placed."""
    loop = manager.launcher.queue
    gc.collect()
    start = time.perf_counter()
    loop.start()
    await loop.next_pass(600)
    seconds = time.perf_counter() - start
    await loop.stop()
    again = await loop.run_pass()
    assert not again.placed, "a second pass placed more: the first did not place all that fit"
    placed = sum(s.status is SessionStatus.PREPARING for s in manager.store.list())
    return seconds, placed


def reset(manager: ClusterManager) -> None:
    """Every session PENDING again, unplaced (between runs of the placing)."""
    with manager.store.tx() as db:
        db.execute("UPDATE sessions SET status = 'PENDING', status_reason = ''")
        db.execute(
            "UPDATE containers SET agent = NULL, record = json_set(record, '$.agent', NULL,"
            " '$.gpu_ids', json('[]'))"
        )


async def floor_place(manager: ClusterManager, sessions: list[Session]) -> float:
    """The pure place_queue on the same queue and agents, in memory."""
    slots = await manager.launcher._slots(IMAGE)
    specs = [s.spec for s in sessions]
    gc.collect()
    with harness.Timer() as timer:
        place_queue(specs, slots, images={IMAGE: slots}, refuse=True)
    return timer.seconds


async def list_latency(manager: ClusterManager, owner: str, samples: int) -> list[float]:
    """``page`` of one owner's active sessions while the loop keeps passing."""
    times = []
    for _ in range(samples):
        with harness.Timer() as timer:
            page = await manager.page("active", 50, owner=owner)
        assert page and all(s.owner == owner for s in page)
        times.append(timer.seconds)
        await asyncio.sleep(0.05)
    return times


def list_floor(path: str, owner: str, samples: int) -> list[float]:
    """The same page with one bare SQL query (rows only, no parsing)."""
    db = sqlite3.connect(path)
    sql = (
        f"SELECT id, record FROM sessions WHERE {status_in(LISTINGS['active'])}"
        " AND json_extract(record, '$.owner') = ? ORDER BY created_at DESC LIMIT 50"
    )
    times = []
    for _ in range(samples):
        with harness.Timer() as timer:
            rows = db.execute(sql, (owner,)).fetchall()
        assert rows
        times.append(timer.seconds)
    db.close()
    return times


async def new_launch(manager: ClusterManager, index: int) -> float:
    """End one running session, then time a new owner's launch until it is placed.

    The loop is held back meanwhile: its pass after the termination would give the
    freed room to the waiting queue first. It runs again afterwards."""
    loop = manager.launcher.queue
    await loop.stop()
    running = [s for s in manager.store.list() if s.status is SessionStatus.PREPARING]
    victim = next(s for s in running if s.spec.resource_group == "default")
    await manager.terminate(victim.id)
    per = victim.spec.resources
    spec = manager.make_spec(cpu=per.cpu, mem=per.mem, name=f"new{index}")
    gc.collect()
    with harness.Timer() as timer:
        session = await manager.submit(spec, owner=f"newcomer{index}")
    assert session.status is SessionStatus.PREPARING, session.status_reason
    loop.start()
    await loop.next_pass(60)
    return timer.seconds


async def launch_floor(manager: ClusterManager, index: int) -> float:
    """Insert one session and decide its place with the pure scheduler."""
    slots = await manager.launcher._slots(IMAGE)
    spec = manager.make_spec(cpu=0.5, mem="512m", name=f"floor{index}")
    sid = f"floor-{index}"
    session = Session(
        id=sid,
        spec=spec,
        status=SessionStatus.PENDING,
        containers=naming.plan_containers(sid, 1),
        created_at=time.time(),
        updated_at=time.time(),
        owner="floor",
    )
    with harness.Timer() as timer:
        manager.store.insert_session(session)
        place(spec, slots)
    manager.store.set_status(sid, SessionStatus.CANCELLED, "floor")
    return timer.seconds


def _row(case: str, metric: str, ours: list[float], floor: list[float], goal: float) -> dict:
    met = statistics.median(ours) < goal
    note = f"goal < {goal * 1000:g} ms " if goal < 1 else f"goal < {goal:g} s "
    note += "met" if met else "MISSED"
    return harness.result(NAME, case, f"{metric} ({note})", ours, floor, note=note)


async def run(args: argparse.Namespace) -> list[dict[str, Any]]:
    """Set up once; then each measure, ours alternating with its floor."""
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        manager = make_manager(folder, args.agents, args)
        harness.progress(f"recording {args.sessions} waiting sessions")
        sessions = fill(manager, args.sessions, args.owners)
        where = f"{args.sessions} sessions of {args.owners} owners on {args.agents} agents"
        placed_counts: list[int] = []

        async def ours_place() -> float:
            reset(manager)
            seconds, placed = await place_all(manager)
            placed_counts.append(placed)
            return seconds

        ours, floor = await harness.alternate(
            args.repeat, ours_place, lambda: floor_place(manager, sessions)
        )
        placed = placed_counts[-1]
        case = f"queue: {where}, {args.order}" + (", backfill" if args.backfill else "")
        rows.append(
            _row(case, f"place all that fit ({placed} placed)", ours, floor, GOALS["place"])
        )
        waiting = [s for s in manager.store.list() if s.status is SessionStatus.PENDING]
        harness.progress(f"{placed} placed, {len(waiting)} waiting; now the full queue's latencies")
        manager.launcher.queue.start()  # the loop keeps passing, as in a server
        owner = sessions[0].owner
        samples = 10 if args.quick else 40
        ours_list = await list_latency(manager, owner, samples)
        floor_list = list_floor(f"{folder}/cluster.db", owner, samples)
        rows.append(
            _row(
                f"queue: GET sessions of one user, {len(waiting)} waiting",
                "page(owner)",
                ours_list,
                floor_list,
                GOALS["list"],
            )
        )
        counter = iter(range(10**6))
        ours_new, floor_new = await harness.alternate(
            args.repeat * 3,
            lambda: new_launch(manager, next(counter)),
            lambda: launch_floor(manager, next(counter)),
        )
        rows.append(
            _row(
                f"queue: a new launch placed, {len(waiting)} waiting",
                "submit to PREPARING",
                ours_new,
                floor_new,
                GOALS["launch"],
            )
        )
        await manager.launcher.queue.stop()
        await manager.close()
    return rows


def main(argv: list[str] | None = None) -> int:
    """Measure, print the table, write ``bench/results/queue[_quick].json``."""
    return harness.main_of(NAME, parse_args, run, argv)


if __name__ == "__main__":
    sys.exit(main())
