"""A soak: launch/terminate cycles through a real server, watching for anything that grows.

Run as ``.venv/bin/python bench/bench_soak.py [--cycles 50] [--warmup 3] [--json PATH]``.

It starts ``jupyter server`` with the jupyter_cluster extension as a subprocess, in
private Jupyter config/data/runtime dirs (so its own store and manager id) with a
token, and runs ``--warmup`` then ``--cycles`` cycles of:

1. open the events stream (``GET cluster/api/events``);
2. ``POST cluster/api/sessions`` of a size-3 session (``--cpu``/``--mem`` each;
   ``--kernel``: with its kernel), and GET it until RUNNING;
3. follow the logs of main1 and sub1 (``?follow=1``) until each shows the ready
   line; close sub1's from the client;
4. ``DELETE`` the session (it must then be TERMINATED); main1's log stream must
   end (its container is gone) and the events stream must carry the TERMINATED
   event; close the events stream.

After every measured cycle it samples the server process (VmRSS and Threads of
``/proc/PID/status``, the entries of ``/proc/PID/fd``, its child processes) and
counts Docker's containers, networks and volumes, all of them and those labelled
with the run's manager id (by the ``docker`` command line). The bounds:

- labelled containers, networks and volumes: 0 after every cycle, and no volume a
  session's container had is left;
- open fds and threads: at most ``--max-fd-growth`` / ``--max-thread-growth``
  (5) above the sample after the warm-up, and no child process left. The server's
  HTTP clients keep idle connections to the Docker engine open for 15 s after a
  burst of calls (up to 9 more after a launch), so when the last sample is over the
  fd bound the server is sampled again, idle, for up to ``--settle`` seconds: the
  growth judged is the one that stays;
- RSS: at most ``--max-rss-growth`` MB (20) above the sample after the warm-up
  (the least-squares slope in KB per cycle is reported too).

The totals on the engine are reported, not judged: other work shares the engine.
It prints a table and a verdict, writes everything as JSON (``--json``) and exits
with 1 if a bound is broken or a cycle failed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import aiohttp
from common.constants import MANAGER_LABEL, SESSION_LABEL
from common.harness import slope
from common.sandbox import docker_ids, force_clean, jupyter_dirs, leftovers, store_manager_id
from common.server import Server, events_until, process_sample, read_until

READY = "jupyter-cluster: ready"
RESULTS = Path(__file__).resolve().parent / "results" / "soak.json"
ENDED = ("ERROR", "TERMINATED", "CANCELLED")
STEP_TIMEOUT = 30.0  # seconds for a stream to show a line, end, or deliver an event


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cycles", type=int, default=50, help="measured cycles")
    parser.add_argument("--warmup", type=int, default=3, help="cycles before the baseline")
    parser.add_argument("--size", type=int, default=3)
    parser.add_argument("--cpu", default="0.25", help="CPUs per container")
    parser.add_argument("--mem", default="256m", help="memory per container")
    parser.add_argument("--kernel", action="store_true", help="start each session's kernel")
    parser.add_argument("--timeout", type=float, default=180.0, help="seconds to RUNNING")
    parser.add_argument("--max-fd-growth", type=int, default=5)
    parser.add_argument("--max-thread-growth", type=int, default=5)
    parser.add_argument("--max-rss-growth", type=float, default=20.0, help="MB")
    parser.add_argument(
        "--settle",
        type=float,
        default=40.0,
        help="most seconds to wait at the end for fds over the bound to close",
    )
    parser.add_argument("--json", type=Path, default=RESULTS, help="where to write results")
    return parser.parse_args(argv)


# -- what is measured --------------------------------------------------------------


def docker_sample(manager_id: str) -> dict[str, int]:
    """Containers, networks and volumes on the engine, in all and with this run's label."""
    counts = {}
    for kind, listing in (
        ("containers", ("ps", "-a")),
        ("networks", ("network", "ls")),
        ("volumes", ("volume", "ls")),
    ):
        label = f'{{{{.Label "{MANAGER_LABEL}"}}}}'  # one line per object, maybe empty
        done = subprocess.run(
            ["docker", *listing, "--format", label], capture_output=True, text=True, check=True
        )
        labels = done.stdout.splitlines()
        counts[f"{kind}_total"] = len(labels)
        counts[kind] = labels.count(manager_id)
    return counts


def session_volumes(session_id: str) -> set[str]:
    """Names of the volumes mounted in a session's containers."""
    ids = docker_ids("ps", "-aq", "--filter", f"label={SESSION_LABEL}={session_id}")
    if not ids:
        return set()
    found = json.loads(subprocess.run(["docker", "inspect", *ids], capture_output=True).stdout)
    return {m["Name"] for c in found for m in c["Mounts"] if m.get("Type") == "volume"}


# -- the streams and a cycle ---------------------------------------------------------


async def wait_status(server: Server, session_id: str, status: str, timeout: float) -> None:
    """GET the session until its status is ``status`` (and its kernel, if any, runs)."""
    deadline = time.monotonic() + timeout
    while True:
        code, session = await server.call("GET", f"cluster/api/sessions/{session_id}")
        if code != 200:
            raise RuntimeError(f"GET session {session_id}: {code} {session}")
        kernel_up = status != "RUNNING" or session["kernel_state"] in (None, "running")
        if session["status"] == status and kernel_up:
            return
        if session["status"] in ENDED or time.monotonic() > deadline:
            raise RuntimeError(f"session {session_id} is not {status}: {session}")
        await asyncio.sleep(0.2)


async def cycle(server: Server, args: argparse.Namespace) -> set[str]:
    """One launch/terminate cycle with its streams (see the module docstring);
    returns the names of the volumes the session's containers had."""
    api = "cluster/api/sessions"
    events = await server.stream("cluster/api/events")
    try:
        body = {"size": args.size, "cpu": args.cpu, "mem": args.mem, "start_kernel": args.kernel}
        code, session = await server.call("POST", api, body)
        if code != 201:
            raise RuntimeError(f"launch refused: {code} {session}")
        sid = session["id"]
        await wait_status(server, sid, "RUNNING", args.timeout)
        volumes = session_volumes(sid)
        logs: list[aiohttp.ClientResponse] = []
        try:
            for host in ("main1", "sub1"):
                logs.append(await server.stream(f"{api}/{sid}/containers/{host}/logs?follow=1"))
                await asyncio.wait_for(read_until(logs[-1], READY), STEP_TIMEOUT)
            logs[1].close()  # sub1's client goes away
            code, text = await server.call("DELETE", f"{api}/{sid}")
            if code != 204:
                raise RuntimeError(f"DELETE: {code} {text}")
            await wait_status(server, sid, "TERMINATED", 0)
            await asyncio.wait_for(logs[0].read(), STEP_TIMEOUT)  # the server ends main1's
        finally:
            for response in logs:
                response.close()
        await asyncio.wait_for(events_until(events, sid, "TERMINATED"), STEP_TIMEOUT)
        return volumes
    finally:
        events.close()


# -- the run --------------------------------------------------------------------------


def rss_slope(values: list[float]) -> float:
    """Least-squares slope of ``values`` against their index (0 for fewer than two)."""
    return slope(range(len(values)), values) if len(values) >= 2 else 0.0


async def settled_fds(pid: int, base: dict[str, Any], args: argparse.Namespace) -> dict[str, Any]:
    """The server's fds once idle: sampled each second until within the bound of
    ``base`` or ``--settle`` seconds passed (idle keep-alive connections close)."""
    began = time.monotonic()
    while True:
        sample = process_sample(pid, by_kind=True)
        waited = time.monotonic() - began
        if sample["fds"] - base["fds"] <= args.max_fd_growth or waited >= args.settle:
            return {"fds": sample["fds"], "fd_kinds": sample["fd_kinds"], "waited": waited}
        await asyncio.sleep(1.0)


def grown_kinds(before: dict[str, int], after: dict[str, int]) -> str:
    """The kinds of fds that grew between two samples, as ``kind +n`` (for the verdict)."""
    grown = {k: after[k] - before.get(k, 0) for k in after if after[k] > before.get(k, 0)}
    return ", ".join(f"{k} +{n}" for k, n in sorted(grown.items())) or "none by kind"


def verdict(
    samples: list[dict[str, Any]],
    base: dict[str, Any],
    args: argparse.Namespace,
    settled: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Growth figures of the measured cycles against the baseline, and the broken
    bounds; the fds judged are ``settled``'s (see :func:`settled_fds`) when given."""
    last = {**samples[-1], **(settled or {})}
    summary = {
        "rss_growth_mb": round(last["rss_mb"] - base["rss_mb"], 2),
        "rss_slope_kb_per_cycle": round(rss_slope([s["rss_mb"] * 1024 for s in samples]), 1),
        "fd_growth": last["fds"] - base["fds"],
        "thread_growth": last["threads"] - base["threads"],
        "fd_max": max(s["fds"] for s in samples),
        "thread_max": max(s["threads"] for s in samples),
        "fd_settle_seconds": round(settled["waited"], 1) if settled else 0.0,
    }
    broken = [
        f"cycle {s['cycle']}: {kind} labelled with the manager id left: {s[kind]}"
        for s in samples
        for kind in ("containers", "networks", "volumes")
        if s[kind] != 0
    ]
    broken += [
        f"cycle {s['cycle']}: volumes left: {s['volumes_left']}"
        for s in samples
        if s["volumes_left"]
    ]
    broken += [
        f"cycle {s['cycle']}: {s['children']} child processes" for s in samples if s["children"]
    ]
    if summary["fd_growth"] > args.max_fd_growth:
        grown = grown_kinds(base.get("fd_kinds", {}), last.get("fd_kinds", {}))
        broken.append(
            f"open fds grew by {summary['fd_growth']} (bound {args.max_fd_growth}): {grown}"
        )
    if summary["thread_growth"] > args.max_thread_growth:
        broken.append(
            f"threads grew by {summary['thread_growth']} (bound {args.max_thread_growth})"
        )
    if summary["rss_growth_mb"] > args.max_rss_growth:
        broken.append(f"RSS grew by {summary['rss_growth_mb']} MB (bound {args.max_rss_growth})")
    return {"summary": summary, "violations": broken}


async def soak(args: argparse.Namespace, root: Path, manager_id: str) -> dict[str, Any]:
    """Start the server, run the cycles, sample after each; the results."""
    server = Server(root)
    samples: list[dict[str, Any]] = []
    result: dict[str, Any] = {"manager_id": manager_id, "samples": samples, "error": None}
    try:
        await server.start()
        assert server.proc is not None
        result["server_pid"] = server.proc.pid
        for number in range(1, args.warmup + args.cycles + 1):
            start = time.monotonic()
            volumes = await cycle(server, args)
            seconds = time.monotonic() - start
            await asyncio.sleep(0.5)  # let the server's housekeeping after the end run
            sample = {
                "cycle": number - args.warmup,
                "seconds": round(seconds, 2),
                **process_sample(server.proc.pid, by_kind=True),
                **docker_sample(manager_id),
                "volumes_left": sorted(volumes & set(docker_ids("volume", "ls", "-q")))
                if volumes
                else [],
            }
            if number == args.warmup:
                result["baseline"] = sample
            elif number > args.warmup:
                samples.append(sample)
                print(row(sample), file=sys.stderr, flush=True)
        if samples and result["baseline"]:
            result["settled"] = await settled_fds(server.proc.pid, result["baseline"], args)
    except Exception as exc:  # reported, then the bench fails
        log = (root / "server.log").read_text(errors="replace").splitlines()[-20:]
        result["error"] = f"{type(exc).__name__}: {str(exc)[:2000]}"
        result["server_log_tail"] = log
    finally:
        result.setdefault("baseline", samples[0] if samples else None)
        await server.stop()
    return result


HEADER = "cycle  rss MB  fds  threads  containers  networks  volumes  s/cycle"


def row(s: dict[str, Any]) -> str:
    """One line of the table (labelled counts, the engine's totals in brackets)."""
    docker = "  ".join(
        f"{s[k]:>2} ({s[k + '_total']:>3})".rjust(w)
        for k, w in (("containers", 10), ("networks", 8), ("volumes", 7))
    )
    return (
        f"{s['cycle']:>5}  {s['rss_mb']:6.1f}  {s['fds']:>3}  {s['threads']:>7}  "
        f"{docker}  {s['seconds']:7.2f}"
    )


def main(argv: list[str] | None = None) -> int:
    """Entry point: private Jupyter dirs, the soak, the table, the verdict, the JSON."""
    args = parse_args(argv)
    with jupyter_dirs() as root:
        manager_id = store_manager_id()
        print(HEADER, file=sys.stderr)
        result = asyncio.run(soak(args, Path(root), manager_id))
    left = leftovers([f"{MANAGER_LABEL}={manager_id}"])
    if left:
        force_clean(left)
    samples, base = result["samples"], result["baseline"]
    judged: dict[str, Any] = {"summary": {}, "violations": []}
    if samples:
        judged = verdict(samples, base, args, result.get("settled"))
    violations = judged["violations"]
    if result["error"]:
        violations.insert(0, f"a cycle failed: {result['error']}")
        print("the server's log ended with:\n" + "\n".join(result["server_log_tail"]))
    if left:
        violations.append(f"Docker objects left at the end (removed now): {left}")
    bounds = {
        "labelled_objects": 0,
        "fd_growth": args.max_fd_growth,
        "thread_growth": args.max_thread_growth,
        "rss_growth_mb": args.max_rss_growth,
    }
    settings = {k: v for k, v in vars(args).items() if k != "json"}
    report = {**settings, **result, **judged, "bounds": bounds, "ok": not violations}
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(report, indent=1))
    print(f"soak: {len(samples)} cycles of size {args.size} after {args.warmup} warm-up")
    print(HEADER)
    print("\n".join(row(s) for s in samples))
    if base:
        print(
            f"baseline (after warm-up): rss {base['rss_mb']:.1f} MB, fds {base['fds']}, "
            f"threads {base['threads']}"
        )
    print(json.dumps(judged["summary"]))
    print("verdict: " + ("OK" if not violations else "FAILED\n  " + "\n  ".join(violations)))
    print(f"results written to {args.json}")
    return 0 if not violations else 1


if __name__ == "__main__":
    sys.exit(main())
