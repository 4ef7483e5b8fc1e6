"""How fast the CLI answers (issue 27, item 6): a fresh ``jupyter cluster`` per command.

Run as ``.venv/bin/python bench/bench_cli.py [--repeat 7] [--lines 200000] [--quick]``.

In a private Jupyter data dir, one session is launched whose bootstrap prints
``--lines`` numbers (``seq``) into main1's log. Then, alternating with the floor:

ours: ``jupyter-cluster ls``, ``show <session>``, ``agents`` and ``--help`` (the
    console script), and ``jupyter cluster ls`` (through the ``jupyter`` launcher,
    which execs the same script), each a fresh process, output to /dev/null.
    floor: ``docker ps`` (a fresh Docker CLI asking the engine). Goal: each median
    ≤ 0.2 s on the machine (an absolute goal: the rows say met or MISSED in their
    note and below the table; the ratio is for comparing machines). The notes of
    ``ls``/``show``/``agents`` also say whether they answered from the store (the
    fast path) or through the engine, and why (the ``logs`` row's note too).
logs: ``jupyter-cluster logs <session> main1 > /dev/null`` against ``docker logs
    <main1's container> > /dev/null``, the same log. Goal: ratio ≤ 1.2.

The session is removed at the end; the run fails if a container or network is left.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from common import harness
from common.constants import MANAGER_LABEL
from common.harness import logged
from common.sandbox import jupyter_dirs, leftovers, store_manager_id

NAME = "cli"
#: The most a listing command or --help may take (seconds, median).
CLI_GOAL = 0.2
#: The most ``logs`` may take against ``docker logs`` of the same log.
LOGS_GOAL = 1.2
BIN = Path(sys.executable).parent
SESSION = "bench-cli"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options (``--quick``: 20,000 lines, two runs of each)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, help="runs of each command (default 7)")
    parser.add_argument("--lines", type=int, default=200_000, help="lines in the log")
    parser.add_argument("--quick", action="store_true", help="a small, fast variant")
    args = parser.parse_args(argv)
    if args.quick:
        args.lines = 20_000
    args.repeat = args.repeat or (2 if args.quick else 7)
    return args


def timed(*command: str) -> float:
    """Seconds ``command`` takes, its output thrown away; it must exit 0."""
    start = time.perf_counter()
    done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} exited {done.returncode}: {done.stderr!r}")
    return seconds


def which_path(command: list[str]) -> str:
    """For ``ls``/``show``/``agents``/``logs``: "; fast path" when the command answered
    without the engine (nothing to reconcile), else "; engine: <why>" (what it says on
    stderr when ``JUPYTER_CLUSTER_QUICK_DEBUG`` is set); "" for the other commands."""
    if not {"ls", "show", "agents", "logs"} & set(command):
        return ""
    env = {**os.environ, "JUPYTER_CLUSTER_QUICK_DEBUG": "1"}
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    why = [line for line in done.stderr.splitlines() if "full path:" in line]
    return f"; engine: {why[0].split('full path:', 1)[1].strip()}" if why else "; fast path"


def cli(*words: str) -> list[str]:
    """The console script's command line."""
    return [str(BIN / "jupyter-cluster"), *words]


def launch(lines: int) -> str:
    """Launch the log session; main1's container id."""
    bootstrap = f"seq {lines}"
    command = cli("launch", "--name", SESSION, "--mem", "256m", "--bootstrap", bootstrap, "--json")
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise RuntimeError(f"launch failed: {done.stderr}")
    return str(json.loads(done.stdout)["containers"][0]["container_id"])


async def run(args: argparse.Namespace) -> list[dict[str, Any]]:
    """The CLI's commands and logs against their floors; fails if a Docker object is left."""
    with jupyter_dirs():
        manager_id = store_manager_id()
        try:
            container = launch(args.lines)
            # warm-up: page cache, compiled modules
            for command in (cli("ls"), ["docker", "ps"], cli("logs", SESSION, "main1")):
                timed(*command)
            rows = []
            commands = {
                "ls": cli("ls"),
                "show": cli("show", SESSION),
                "agents": cli("agents"),
                "--help": cli("--help"),
                "ls via `jupyter cluster`": [str(BIN / "jupyter"), "cluster", "ls"],
            }
            for case, command in commands.items():
                ours, floor = await harness.alternate(
                    args.repeat,
                    logged(case, _sync(command)),
                    logged("docker ps", _sync(["docker", "ps"])),
                )
                row = harness.result(NAME, f"{case} vs docker ps", "seconds", ours, floor)
                verdict = "met" if row["ours_median"] <= CLI_GOAL else "MISSED"
                row["note"] = f"goal: median ≤ {CLI_GOAL} s ({verdict}){which_path(command)}"
                rows.append(row)
            ours, floor = await harness.alternate(
                args.repeat,
                logged("logs", _sync(cli("logs", SESSION, "main1"))),
                logged("docker logs", _sync(["docker", "logs", container])),
            )
            rows.append(
                harness.result(
                    NAME,
                    f"logs of {args.lines} lines vs docker logs",
                    "seconds",
                    ours,
                    floor,
                    goal=LOGS_GOAL,
                    note=f"{args.lines} lines of seq in main1's log"
                    + which_path(cli("logs", SESSION, "main1")),
                )
            )
        finally:
            subprocess.run(cli("rm", SESSION), capture_output=True, timeout=300)
        left = leftovers([f"{MANAGER_LABEL}={manager_id}"])
    if left:
        raise SystemExit(f"the benchmark left Docker objects behind: {left}")
    for row in rows:
        if row["note"].startswith("goal"):
            print(f"{row['case']}: {row['ours_median']:.3f} s, {row['note']}")
    return rows


def _sync(command: list[str]) -> Any:
    """An awaitable-returning function timing ``command`` (what harness.alternate runs)."""

    async def once() -> float:
        return timed(*command)

    return once


def main(argv: list[str] | None = None) -> int:
    """Measure, print the table, write ``bench/results/cli[_quick].json``."""
    return harness.main_of(NAME, parse_args, run, argv)


if __name__ == "__main__":
    sys.exit(main())
