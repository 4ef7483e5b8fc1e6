"""What following a busy size-16 session from JupyterLab costs the server (issue 27, item 5).

Run as ``.venv/bin/python bench/bench_follow.py [--size 16] [--rate 50] [--window 20]
[--repeat 3] [--quick]``.

A ``jupyter server`` subprocess with the extension (private Jupyter dirs, its own
store; ``ClusterApp.stats_interval`` = ``--interval``, 2 s) launches one session of
``--size`` containers of ``--cpu`` CPU and ``--mem`` each through REST; then every
container prints ``--rate`` lines of 80 characters a second into its log for the
rest of the run. ``--repeat`` times, for ``--window`` seconds each, the server
process's CPU (user + system seconds per wall second, from ``/proc``) is measured
while (i) nobody follows anything, (ii) a Lab follows the session: the events
stream, the session's stats stream, every container's log (``containers/HOST/logs?follow=1``;
the Lab itself follows only the visible log tabs, and one user may hold 12 streams
by default: the server here allows any number) and ``GET agents`` every 5 s, as
its sidebar polls (``common.follow_cost.LabFollowers``), and (iii) after they went
away.

ours: the server's CPU in (ii) over its CPU in (i) of the same round, in cores.
    Goal: under 0.05 cores (5 % of a core; an absolute goal: the row's note says
    met or MISSED).
floor: one ``docker logs -f --tail 0`` per container for a window (the least a
    reader of the same logs spends: the docker CLIs' own CPU, from their rusage),
    alternating with the rounds of ours. The notes say how much log each side read.

Everything runs in temporary Jupyter dirs; every container and network made is
removed, and the script fails if any is left.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
from typing import Any

import aiohttp
from common import follow_cost, harness
from common import stats_cost as sup
from common.harness import progress
from common.server import add_session_options, launch_running, measured_on_server

NAME = "follow"
#: Most the server may spend following the session, in cores.
GOAL_CORES = 0.05


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options (``--quick``: size 2, one round of 3 s windows)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_session_options(parser)
    parser.add_argument("--rate", type=int, default=50, help="log lines a second per container")
    parser.add_argument(
        "--parts",
        default=",".join(sorted(follow_cost.PARTS)),
        help="what the Lab follows: some of logs,stats,events,agents (to see what each costs)",
    )
    parser.add_argument("--quick", action="store_true", help="a small, fast variant")
    args = parser.parse_args(argv)
    parts = {p.strip() for p in args.parts.split(",") if p.strip()}
    if not parts or parts - follow_cost.PARTS:
        parser.error(f"--parts: some of {','.join(sorted(follow_cost.PARTS))}")
    args.parts = ",".join(sorted(parts))  # a string: the options go into the JSON
    if args.quick:
        args.size, args.window, args.repeat = 2, 3.0, 1
    return args


class Rounds:
    """The samples of every round of ours and every floor window."""

    def __init__(self) -> None:
        self.cpu: dict[str, list[float]] = {"idle": [], "lab": [], "after": []}
        self.log_rate: list[float] = []  # bytes a second the Lab's followers read
        self.stats: list[int] = []
        self.floor: list[float] = []
        self.floor_rate: list[float] = []

    def over_idle(self, case: str) -> list[float]:
        """``case``'s CPU minus the idle CPU of the same round."""
        return [v - i for v, i in zip(self.cpu[case], self.cpu["idle"], strict=True)]


async def measure(
    args: argparse.Namespace, pid: int, http: aiohttp.ClientSession, api: str
) -> Rounds:
    """Launch the session, start its log writers, alternate rounds with floor windows."""
    session = await launch_running(http, api, args.size, args.cpu, args.mem, args.timeout)
    ids = [c["container_id"] for c in session["containers"]]
    follow_cost.start_writers(ids, args.rate)
    settle = args.interval + 2.0
    rounds = Rounds()

    async def ours() -> float:
        await asyncio.sleep(settle)
        rounds.cpu["idle"].append((await sup.window(pid, args.window, None)).cpu)
        async with follow_cost.LabFollowers(
            http, api, session, frozenset(args.parts.split(","))
        ) as lab:
            before, samples = lab.log_bytes, lab.stats_samples
            rounds.cpu["lab"].append((await sup.window(pid, args.window, None)).cpu)
            rounds.log_rate.append((lab.log_bytes - before) / args.window)
            rounds.stats.append(lab.stats_samples - samples)
        await asyncio.sleep(settle)  # their handlers notice and stop
        rounds.cpu["after"].append((await sup.window(pid, args.window, None)).cpu)
        over = rounds.cpu["lab"][-1] - rounds.cpu["idle"][-1]
        progress(f"round: idle {rounds.cpu['idle'][-1]:.4f}, Lab follows +{over:.4f} cores")
        return over

    async def floor() -> float:
        used, read = await asyncio.to_thread(follow_cost.docker_follow_window, ids, args.window)
        rounds.floor_rate.append(read / args.window)
        progress(f"floor: {used / args.window:.4f} cores ({args.size} x docker logs -f)")
        return used / args.window

    _, rounds.floor = await harness.alternate(args.repeat, ours, floor)
    return rounds


def rows_of(args: argparse.Namespace, r: Rounds) -> list[dict[str, Any]]:
    """The table's rows from the samples."""
    shape = f"{args.size} containers x {args.rate} lines/s"
    expected = args.size * args.rate * (follow_cost.LINE_WIDTH + 1)
    read = statistics.median(r.log_rate)
    lab = harness.result(
        NAME,
        f"{shape}, a Lab follows events, stats, every log",
        "server CPU over idle",
        r.over_idle("lab"),
        r.floor,
        unit="cores",
        note="",
    )
    verdict = "met" if lab["ours_median"] < GOAL_CORES else "MISSED"
    lab["note"] = (
        f"goal: < {GOAL_CORES} cores ({verdict}); logs read {read / 1024:.0f} KiB/s of "
        f"{expected / 1024:.0f} KiB/s written, floor read "
        f"{statistics.median(r.floor_rate) / 1024:.0f} KiB/s; "
        f"{statistics.median(r.stats):g} stats samples per {args.window:g} s window; "
        f"floor: {args.size} x docker logs -f"
    )
    lab.update(absolute_goal_met=verdict == "met", log_read=read, log_written=expected)
    return [
        harness.result(
            NAME, f"{shape}, nobody follows", "server CPU", r.cpu["idle"], [], unit="cores"
        ),
        lab,
        harness.result(
            NAME,
            f"{shape}, followers gone",
            "server CPU",
            r.cpu["after"],
            r.cpu["idle"],
            unit="cores",
            note="floor: the idle CPU of the same round",
        ),
    ]


async def run(args: argparse.Namespace) -> list[dict[str, Any]]:
    """Start the server, measure, end the session, stop it; the rows. Fails if anything
    is left behind."""

    async def on(server: Any, http: aiohttp.ClientSession, api: str) -> Rounds:
        assert server.proc is not None
        return await measure(args, server.proc.pid, http, api)

    # one stream per log is more than one user may hold by default (12)
    cpu = float(args.cpu) * args.size + 1
    rounds = await measured_on_server(on, cpu, args.interval, max_streams_per_user=0)
    rows = rows_of(args, rounds)
    print(f"{rows[1]['case']}: {rows[1]['ours_median']:.4f} cores; {rows[1]['note']}")
    return rows


def main(argv: list[str] | None = None) -> int:
    """Measure, print the table, write ``bench/results/follow[_quick].json``."""
    return harness.main_of(NAME, parse_args, run, argv)


if __name__ == "__main__":
    sys.exit(main())
