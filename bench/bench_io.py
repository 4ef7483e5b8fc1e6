"""Round trip, log throughput and the server under many sessions (issue #13, 1d, 1e, 1g).

Run as ``.venv/bin/python bench/bench_io.py [--only d,e,g] [--repeat 3] [--quick]``.

(d) an empty cell's round trip: ``execute_request`` of ``pass`` until its
    ``execute_reply`` and ``status: idle`` arrived, ``--calls`` times (200), one
    call of each kind after the other, alternating which goes first.
    ours: a size-1 cluster kernel (``AsyncKernelManager`` of a cluster kernelspec,
    kernel in main1) of the local agent, once with ``kernel_transport: direct``
    (main1's published ports, HMAC-signed ZMQ) and once with ``ssh``, the default
    (the kernel's ports forwarded through main1's SSH port to Unix sockets: the
    private path).
    floor: a plain local ipykernel (``AsyncKernelManager`` of ``python3``) on the
    same machine. Goals: median ours/floor <= 1.3 direct, <= 1.6 ssh.
(e) log follow throughput (lines/s): a size-1 session whose bootstrap prints
    ``--lines`` numbers (200,000) and then a marker line; each reader reads main1's
    log from the start, following it, until the marker. ours: ``GET
    cluster/api/sessions/{id}/containers/main1/logs?follow=1`` of a running
    ``jupyter server`` subprocess with the extension; and ``ClusterSession.logs
    ("main1", follow=True)`` in this process, which prints every line (what
    ``%cluster logs --follow`` calls; here stdout is a counter). floor: ``docker
    logs -f`` of the same container, run alternating with each. Goal: >= 0.8.
(g) the same server with ``--sessions`` active sessions (100) of 0.01 CPU and 64 MB:
    ``--real`` real size-1 sessions launched through the API and the rest stand-ins
    (see common/server_load.py: a real session's record with its own running
    container, but no private network: Docker's default address pools hold about
    30 networks for the whole engine). Rows: ``GET cluster/api/sessions`` with no
    session and with them, each against ``GET api/status`` of the same server
    (floor: the least an authenticated JSON request costs there), alternating;
    events fan-out: from a POST of a session that must wait until its PENDING
    event reached all ``--listeners`` (20) SSE clients of ``cluster/api/events``
    (floor again ``GET api/status``); the server's RSS growth per session.
    Goal: ``GET sessions`` median under 50 ms at 100 sessions (absolute).

Everything runs in temporary Jupyter dirs; every container and network made is
removed, and the script fails if any is left.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from functools import partial
from pathlib import Path
from typing import Any

import aiodocker
import aiohttp
from common import harness
from common import server_load as load
from common.constants import IMAGE, MANAGER_LABEL
from common.harness import progress
from common.kernels import (
    cluster_config,
    install_kernelspec,
    round_trip,
    start_kernel,
    stop_kernel,
)
from common.logs import bench_logs, close_engine
from common.sandbox import check_nothing_left, jupyter_dirs, store_manager_id
from common.server import (
    Server,
    call,
    process_sample,
    serving,
    timed_get,
    wait_running,
    write_server_config,
)

NAME = "io"
GOAL_GET_SESSIONS = 0.050  # seconds, median, at 100 sessions


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options (``--quick``: 20 calls, 2,000 lines, 10 sessions)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="d,e,g", help="items to run, comma-separated")
    parser.add_argument("--repeat", type=int, default=3, help="log reads of each kind (e)")
    parser.add_argument("--calls", type=int, default=200, help="cell round trips (d)")
    parser.add_argument("--lines", type=int, default=200_000, help="log lines (e)")
    parser.add_argument("--sessions", type=int, default=100, help="active sessions (g)")
    parser.add_argument("--real", type=int, default=5, help="of them real sessions (g)")
    parser.add_argument("--listeners", type=int, default=20, help="SSE clients (g)")
    parser.add_argument("--gets", type=int, default=100, help="GETs of each kind (g)")
    parser.add_argument("--probes", type=int, default=10, help="fan-out probes (g)")
    parser.add_argument("--image", default=IMAGE)
    parser.add_argument("--timeout", type=float, default=180.0, help="seconds to ready")
    parser.add_argument("--quick", action="store_true", help="a small, fast variant")
    args = parser.parse_args(argv)
    if args.quick:
        args.repeat, args.calls, args.lines, args.sessions = 2, 20, 2000, 10
        args.real, args.listeners, args.gets, args.probes = 2, 5, 20, 3
    args.only = {p.strip() for p in args.only.split(",") if p.strip()}
    args.real = max(1, min(args.real, args.sessions))
    return args


# -- (d) -------------------------------------------------------------------------------


async def bench_round_trip(args: argparse.Namespace, root: str) -> list[dict[str, Any]]:
    """Rows of (d): median and p95 of the cell round trip, direct and over SSH."""
    install_kernelspec(root, args.timeout, image=args.image, size=1, cpu="1", mem="512m")
    rows = []
    local_km, local = await start_kernel("python3")
    try:
        for transport, goal in (("direct", 1.3), ("ssh", 1.6)):
            progress(f"(d) starting a cluster kernel, kernel_transport {transport}")
            km, client = await start_kernel("bench-1", cluster_config(transport), args.timeout)
            try:
                for _ in range(5):  # warm-up: the first cells import and compile
                    await round_trip(client)
                    await round_trip(local)
                ours, floor = await harness.alternate(
                    args.calls, partial(round_trip, client), partial(round_trip, local)
                )
            finally:
                await stop_kernel(km, client)
            case = f"d: empty cell, {transport}"
            note = f"{args.calls} calls; floor: local ipykernel"
            rows.append(harness.result(NAME, case, "median", ours, floor, goal=goal, note=note))
            p95 = [harness.percentile(ours, 95)], [harness.percentile(floor, 95)]
            rows.append(harness.result(NAME, case, "p95", *p95, note=note))
    finally:
        await stop_kernel(local_km, local)
    return rows


# -- (g) -------------------------------------------------------------------------------


async def bench_server(
    args: argparse.Namespace, server: Server, http: aiohttp.ClientSession, manager_id: str
) -> list[dict[str, Any]]:
    """Rows of (g): GET sessions empty and full, events fan-out, RSS per session."""
    assert server.proc is not None
    api, n = server.url + "cluster/api/", args.sessions
    sessions, status = api + "sessions", server.url + "api/status"

    async def get_sessions() -> float:
        return await timed_get(http, sessions)

    async def get_status() -> float:
        return await timed_get(http, status)

    for _ in range(10):  # warm-up
        await get_sessions()
    rows = []
    empty, floor = await harness.alternate(args.gets, get_sessions, get_status)
    note = "floor: GET api/status"
    rows.append(
        harness.result(NAME, "g: GET sessions, 0 sessions", "latency", empty, floor, note=note)
    )
    rss_before = process_sample(server.proc.pid)["rss_mb"]

    progress(f"(g) launching {args.real} real sessions and {n - args.real} stand-ins")
    launched = await asyncio.gather(
        *(call(http, "POST", sessions, {"size": 1, **load.TINY}) for _ in range(args.real))
    )
    for session in launched:
        await wait_running(http, f"{sessions}/{session['id']}", args.timeout)
    docker = aiodocker.Docker()
    try:
        await load.add_standins(docker, launched[0]["id"], n - args.real, manager_id)
    finally:
        await docker.close()
    shown = await call(http, "GET", sessions)
    if len(shown) != n or any(s["status"] != "RUNNING" for s in shown):
        raise RuntimeError(f"expected {n} RUNNING sessions, GET sessions shows {len(shown)}")
    await asyncio.sleep(2)  # the events hub has polled them all
    rss_after = process_sample(server.proc.pid)["rss_mb"]

    for _ in range(10):
        await get_sessions()
    full, floor = await harness.alternate(args.gets, get_sessions, get_status)
    row = harness.result(NAME, f"g: GET sessions, {n} sessions", "latency", full, floor)
    met = row["ours_median"] < GOAL_GET_SESSIONS
    row.update(abs_goal=GOAL_GET_SESSIONS, abs_met=met)
    row["note"] = f"{args.real} real + {n - args.real} stand-ins; {note}; goal median < 50 ms " + (
        "met" if met else "MISSED"
    )
    rows.append(row)

    listeners = load.Listeners(http, api + "events", args.listeners)
    await listeners.open()
    firsts: list[float] = []

    async def fanout() -> float:
        first, last = await load.fanout_once(http, api, listeners, args.agent_cpu)
        firsts.append(first)
        return last

    try:
        lasts, floor = await harness.alternate(args.probes, fanout, get_status)
    finally:
        await listeners.close()
    first = harness.percentile(firsts, 50)
    case = f"g: event to {args.listeners} SSE listeners"
    rows.append(
        harness.result(
            NAME,
            case,
            "POST → last listener",
            lasts,
            floor,
            note=f"{n} sessions; first listener median {first * 1000:.1f} ms; {note}",
        )
    )
    per_session = (rss_after - rss_before) * 1024 / n
    rows.append(
        harness.result(
            NAME,
            f"g: server RSS, {n} sessions",
            "growth per session",
            [per_session],
            [],
            unit="KB",
            note=f"RSS {rss_before:.1f} → {rss_after:.1f} MB",
        )
    )
    return rows


# -- the run ---------------------------------------------------------------------------


async def run(args: argparse.Namespace) -> list[dict[str, Any]]:
    """Every item asked for, in private Jupyter dirs; the rows. Fails if anything is left."""
    rows: list[dict[str, Any]] = []
    with jupyter_dirs() as root:
        manager_id = store_manager_id()
        try:
            if "d" in args.only:
                rows += await bench_round_trip(args, root)
            if args.only & {"e", "g"}:
                rows += await with_server(args, Path(root), manager_id)
        finally:
            close_engine()
            check_nothing_left([f"{MANAGER_LABEL}={manager_id}"])
    return rows


async def with_server(
    args: argparse.Namespace, root: Path, manager_id: str
) -> list[dict[str, Any]]:
    """Start the server, run (e) and (g) against it, end every session, stop it."""
    args.agent_cpu = round(max(1.0, args.sessions * load.TINY_CPU + 0.5), 2)
    write_server_config(args.agent_cpu)
    rows: list[dict[str, Any]] = []
    async with serving(root) as (server, http, api):
        if "e" in args.only:
            rows += await bench_logs(args, http, api)
        if "g" in args.only:
            rows += await bench_server(args, server, http, manager_id)
    return rows


def main(argv: list[str] | None = None) -> int:
    """Measure, print the table, write ``bench/results/io[_quick].json``."""
    return harness.main_of(NAME, parse_args, run, argv)


if __name__ == "__main__":
    sys.exit(main())
