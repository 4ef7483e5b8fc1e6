"""What serving live stats of a size-16 session costs the server (issue #14, item 1).

Run as ``.venv/bin/python bench/bench_stats.py [--size 16] [--window 20] [--repeat 3] [--quick]``.

A ``jupyter server`` subprocess with the extension (private Jupyter dirs, its own
store; ``ClusterApp.stats_interval`` = ``--interval``, 2 s) launches one session of
``--size`` containers (16) of ``--cpu`` 0.1 CPU and ``--mem`` 128 MB each through
REST. Then, ``--repeat`` times, for ``--window`` seconds each, the server process's
CPU (user + system seconds per wall second, from ``/proc``) and RSS are measured
while (i) nobody watches, (ii) one client follows ``GET
cluster/api/sessions/{id}/stats?follow=1``, (iii) five clients follow it, and (iv)
after they have all disconnected (one interval and two seconds later, so their
handlers have noticed).

ours: the server's CPU in (ii) and (iii) over its CPU in (i) of the same round
    (what serving the stream costs), in cores (1.0 = one core busy).
floor: ``docker stats --no-stream`` of the same containers run once per interval
    for a window (the least a reader of Docker's stats spends: the docker CLI's
    own CPU, from its rusage), alternating with the rounds of ours. A reading can
    serve every watcher of a session (the server shares one per interval), so the
    floor of (iii) is the same.
Goal: (ii) and (iii) at most the floor (ratio <= 1). Rows also give the idle CPU, (iv)
against (i) (ratio about 1: reading stops when nobody watches) and the RSS growth
over (i). Notes give the Docker engine's CPU meanwhile (it does the work of
reading cgroups for both) and how many samples the followers got.

Everything runs in temporary Jupyter dirs; every container and network made is
removed, and the script fails if any is left.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import statistics
import sys
from typing import Any

import aiohttp
from common import harness
from common import stats_cost as sup
from common.harness import progress
from common.server import add_session_options, call, launch_running, measured_on_server

NAME = "stats"
GOAL = 1.0  # ours/floor of one follower, and of five
#: Most a round after the followers left may use over idle and still be "back to idle".
BACK_TO_IDLE = 0.01  # cores
#: The rounds with followers, and how the rows call them.
FOLLOWED = (("one", "1 follower"), ("five", "5 followers"))


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options (``--quick``: size 4, 1 round of 3 s windows, 1 s interval)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_session_options(parser)
    parser.add_argument("--quick", action="store_true", help="a small, fast variant")
    args = parser.parse_args(argv)
    if args.quick:
        args.size, args.window, args.interval, args.repeat = 4, 3.0, 1.0, 1
    return args


class Rounds:
    """The samples of every round of ours and every floor window."""

    def __init__(self) -> None:
        self.cpu: dict[str, list[float]] = {"idle": [], "one": [], "five": [], "after": []}
        self.rss: dict[str, list[float]] = {k: [] for k in self.cpu}
        self.engine: dict[str, list[float]] = {k: [] for k in (*self.cpu, "floor")}
        self.samples: dict[str, list[int]] = {"one": [], "five": []}
        self.floor: list[float] = []
        self.floor_runs: list[int] = []

    def add(self, case: str, measured: sup.Window) -> None:
        """Keep one window of ours."""
        self.cpu[case].append(measured.cpu)
        self.rss[case].append(measured.rss_mb)
        self.engine[case].append(measured.dockerd)

    def over_idle(self, case: str, values: dict[str, list[float]]) -> list[float]:
        """``case``'s values minus the idle value of the same round."""
        return [v - i for v, i in zip(values[case], values["idle"], strict=True)]


async def measure(
    args: argparse.Namespace, pid: int, http: aiohttp.ClientSession, api: str
) -> Rounds:
    """Launch the session, then alternate rounds of ours with floor windows."""
    session = await launch_running(http, api, args.size, args.cpu, args.mem, args.timeout)
    ids = [c["container_id"] for c in session["containers"]]
    url = f"{api}sessions/{session['id']}/stats"
    one = await call(http, "GET", url)  # warm-up: imports, the Docker client's pool
    if sum(h is not None for h in one["hosts"].values()) != args.size:
        raise RuntimeError(f"stats of {args.size} containers expected: {one}")
    sup.docker_stats_once(ids)
    engine = sup.dockerd_pid()
    follow, settle = url + "?follow=1", args.interval + 2.0
    rounds = Rounds()

    async def ours() -> float:
        await asyncio.sleep(settle)
        rounds.add("idle", await sup.window(pid, args.window, engine))
        for case, n in (("one", 1), ("five", 5)):
            async with sup.Followers(http, follow, n) as followers:
                rounds.add(case, await sup.window(pid, args.window, engine))
            rounds.samples[case] += followers.samples
            await asyncio.sleep(settle)  # their handlers notice and stop
        rounds.add("after", await sup.window(pid, args.window, engine))
        progress(f"round: {', '.join(f'{k} {v[-1]:.4f}' for k, v in rounds.cpu.items())} cores")
        return rounds.cpu["one"][-1] - rounds.cpu["idle"][-1]

    async def floor() -> float:
        measured, runs = await sup.floor_window(ids, args.window, args.interval, engine)
        rounds.engine["floor"].append(measured.dockerd)
        rounds.floor_runs.append(runs)
        progress(f"floor: {measured.cpu:.4f} cores ({runs} runs of docker stats)")
        return measured.cpu

    _, rounds.floor = await harness.alternate(args.repeat, ours, floor)
    return rounds


def rows_of(args: argparse.Namespace, r: Rounds) -> list[dict[str, Any]]:
    """The table's rows from the samples."""
    n, per = args.size, f"{args.window:g} s windows, interval {args.interval:g} s"

    def engine(case: str) -> str:
        values = [v for v in r.engine[case] if not math.isnan(v)]
        return f"dockerd {statistics.median(values):.3f} cores" if values else "dockerd unseen"

    def got(case: str) -> str:
        return f"{statistics.median(r.samples[case]):g} samples per follower (connected to closed)"

    floor_note = (
        f"floor: docker stats --no-stream x {statistics.median(r.floor_runs):g} ({engine('floor')})"
    )
    over = r.over_idle("after", r.cpu)
    back = max(over) <= BACK_TO_IDLE
    rows = [
        harness.result(
            NAME,
            f"{n} containers, nobody watches",
            "server CPU",
            r.cpu["idle"],
            [],
            unit="cores",
            note=f"{per}; {engine('idle')}",
        ),
        *(
            harness.result(
                NAME,
                f"{n} containers, {label}",
                "server CPU over idle",
                r.over_idle(case, r.cpu),
                r.floor,
                unit="cores",
                goal=GOAL,
                note=f"{got(case)}; {engine(case)}; {floor_note}",
            )
            for case, label in FOLLOWED
        ),
        harness.result(
            NAME,
            f"{n} containers, followers gone",
            "server CPU",
            r.cpu["after"],
            r.cpu["idle"],
            unit="cores",
            note=f"floor: the idle CPU; back to idle (within {BACK_TO_IDLE} "
            f"core): {'yes' if back else 'NO'}; {engine('after')}",
        ),
    ]
    for case, label in (*FOLLOWED, ("after", "followers gone")):
        rows.append(
            harness.result(
                NAME,
                f"{n} containers, {label}",
                "server RSS over idle",
                r.over_idle(case, r.rss),
                [],
                unit="MB",
                note=f"idle RSS {statistics.median(r.rss['idle']):.1f} MB",
            )
        )
    rows[3].update(back_to_idle=back)
    return rows


async def run(args: argparse.Namespace) -> list[dict[str, Any]]:
    """Start the server, measure, end the session, stop it; the rows. Fails if anything
    is left behind."""

    async def on(server: Any, http: aiohttp.ClientSession, api: str) -> Rounds:
        assert server.proc is not None
        return await measure(args, server.proc.pid, http, api)

    rounds = await measured_on_server(on, float(args.cpu) * args.size + 1, args.interval)
    return rows_of(args, rounds)


def main(argv: list[str] | None = None) -> int:
    """Measure, print the table, write ``bench/results/stats[_quick].json``."""
    return harness.main_of(NAME, parse_args, run, argv)


if __name__ == "__main__":
    sys.exit(main())
