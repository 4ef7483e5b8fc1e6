"""The pure scheduler placing a long queue on many agents, and how its time grows.

Run as ``.venv/bin/python bench/bench_scheduler.py [--repeat 3] [--quick]``.

ours
    :func:`jupyter_cluster.core.queue.place_queue` placing 10,000 queued sessions
    on 1,000 simulated agents (``bench/common/scheduler_workload.py``: mixed agent sizes,
    two resource groups, two Docker Swarms, GPUs; sessions of a few shapes, a fifth
    multi-node, sizes 1 to 16; demand above capacity, so some wait and get their
    reason), every session tried in turn (``backfill``, the harder case: first in,
    first out stops trying a group at its first waiting session; measured too).
    Exactly the decisions of :func:`~jupyter_cluster.core.scheduler.place` called
    for each session in turn with the earlier ones counted as used (a property
    test checks it); the inputs are built before the clock starts.
floor
    The queue iterated once while the agents are kept sorted: a heap of the agents
    by free CPU (the sort), then one pop, a subtraction and one push per session
    (``scheduler_workload.floor_place``). Chosen over a bare double loop over
    sessions x agents because that would be the O(sessions x agents) cost the
    scheduler must not have; this is the least an n log n placement does in the same
    Python, ignoring memory, GPUs, modes, groups and reasons.

The same is measured at several (sessions, agents) points: both growing together
(1k/100 to 10k/1,000), sessions only (1,000 agents) and agents only (10,000
sessions); the growth exponent of each series is fitted (time ~ n^k, least squares
on log-log). ``place()`` called per session (what the store does, one session per
transaction) is measured at the smallest points for comparison.

Goal (issue #13, item 1c): 10,000 on 1,000 under 1 s, n log n or better (an
exponent near 1 along each series). No Docker, no Jupyter dirs: nothing is made
outside this process.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
from collections.abc import Callable
from functools import partial
from typing import Any

from common import harness
from common import scheduler_workload as support

from jupyter_cluster.core.queue import place_each, place_queue

NAME = "scheduler"
GOAL_SECONDS = 1.0
FULL = {"both": [(1000, 100), (2500, 250), (5000, 500), (10000, 1000)],
        "sessions": [(1000, 1000), (2500, 1000), (5000, 1000), (10000, 1000)],
        "agents": [(10000, 100), (10000, 250), (10000, 500), (10000, 1000)]}  # fmt: skip
QUICK = {"both": [(500, 50), (1000, 100), (2000, 200)],
         "sessions": [(500, 200), (1000, 200), (2000, 200)],
         "agents": [(2000, 50), (2000, 100), (2000, 200)]}  # fmt: skip


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options (``--quick``: up to 2,000 sessions on 200 agents, once)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, help="runs of each kind per point (default 3)")
    parser.add_argument("--quick", action="store_true", help="small points, one run each")
    args = parser.parse_args(argv)
    args.repeat = args.repeat or (1 if args.quick else 3)
    return args


def _timed(work: Callable[[], Any]) -> Callable[[], Any]:
    """An async function timing one call of ``work`` (collected garbage first)."""

    async def once() -> float:
        gc.collect()
        with harness.Timer() as timer:
            work()
        return timer.seconds

    return once


async def run(args: argparse.Namespace) -> list[dict[str, Any]]:
    """Every point, ours alternating with the floor; then the growth exponents."""
    points = QUICK if args.quick else FULL
    medians: dict[tuple[int, int], tuple[float, float]] = {}
    rows = []
    head = points["both"][-1]
    for point in dict.fromkeys(p for series in points.values() for p in series):
        sessions, agents = point
        specs, slots = support.make_queue(sessions), support.make_agents(agents)
        ours, floor = await harness.alternate(
            args.repeat,
            _timed(partial(place_queue, specs, slots, backfill=True)),
            _timed(partial(support.floor_place, specs, slots)),
        )
        label = f"c: {sessions} sessions on {agents} agents"
        metric, note = "place_queue", ""
        if point == head:
            note = f"goal < {GOAL_SECONDS:g} s " + (
                "met" if statistics.median(ours) < GOAL_SECONDS else "MISSED"
            )
            metric += f" ({note})"
        row = harness.result(NAME, label, metric, ours, floor, note=note)
        rows.append(row)
        medians[point] = (row["ours_median"], row["floor_median"])
        if point == head:
            fifo, floor2 = await harness.alternate(
                args.repeat,
                _timed(partial(place_queue, specs, slots)),
                _timed(partial(support.floor_place, specs, slots)),
            )
            rows.append(harness.result(NAME, label, "first in, first out", fifo, floor2))
    for point in points["both"][:2]:  # the per-session path: O(sessions x agents)
        specs, slots = support.make_queue(point[0]), support.make_agents(point[1])
        each, floor = await harness.alternate(
            1,
            _timed(partial(place_each, specs, slots, backfill=True)),
            _timed(partial(support.floor_place, specs, slots)),
        )
        label = f"c: {point[0]} sessions on {point[1]} agents"
        rows.append(harness.result(NAME, label, "place() per session", each, floor))
    for series, varying in (("both", 0), ("sessions", 0), ("agents", 1)):
        ours_k = support.exponent([(p[varying], medians[p][0]) for p in points[series]])
        floor_k = support.exponent([(p[varying], medians[p][1]) for p in points[series]])
        label = {"both": "sessions and agents x10", "sessions": "sessions only"}
        case = f"c: growth, {label.get(series, 'agents only')}"
        metric = f"exponent k, time ~ n^k (floor's k {floor_k:.2f})"
        rows.append(harness.result(NAME, case, metric, [ours_k], [], unit="", note=metric))
    return rows


def main(argv: list[str] | None = None) -> int:
    """Measure, print the table, write ``bench/results/scheduler[_quick].json``."""
    return harness.main_of(NAME, parse_args, run, argv)


if __name__ == "__main__":
    sys.exit(main())
