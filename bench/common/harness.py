"""What every benchmark shares: alternating runs, medians and spread, ratios, goals, output.

Each benchmark measures *ours* against a *floor* (the least any implementation could
take for the same work on the same machine) in the same run, alternating which goes
first, and reports ``ours/floor`` (or ``ours/floor`` of a throughput, where higher
is better). :func:`result` turns the samples into one row; :func:`print_table` and
:func:`write_json` report rows; :func:`main_of` is a benchmark's ``main``;
``bench/run.py`` runs every benchmark and collects their rows into one table and
``bench/results/all.json``. A row may also carry a *peer*: another implementation
measured doing the same thing in the same run (gateway_provisioners in
``bench_gateway.py``), its median and ``ours/peer`` beside ours (:func:`beside`);
``bench/readme_table.py`` turns ``all.json`` into the README's table. Also progress
lines on stderr (:func:`log`, :func:`progress`, :func:`logged`) and the least-squares
:func:`slope` that the launch, soak and scheduler benchmarks fit. Used by every entry script.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from pathlib import Path
from typing import Any

#: ``bench/results/`` (git-ignored): where every benchmark writes its JSON.
RESULTS = Path(__file__).parent.with_name("results")


def percentile(values: Sequence[float], p: float) -> float:
    """The ``p``-th percentile (0-100) by linear interpolation."""
    ordered = sorted(values)
    if not ordered:
        return math.nan
    k = (len(ordered) - 1) * p / 100
    lo, hi = math.floor(k), math.ceil(k)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def result(
    bench: str,
    case: str,
    metric: str,
    ours: Sequence[float],
    floor: Sequence[float],
    *,
    unit: str = "s",
    goal: float | None = None,
    higher_is_better: bool = False,
    note: str = "",
    shown_as_peer: bool = False,
) -> dict[str, Any]:
    """One row: medians, spread (min-max), p95 and the ratio ours/floor of the medians.

    ``goal`` is the most ``ours/floor`` may be (or, with ``higher_is_better``, the
    least: e.g. 0.8 of the floor's throughput); ``met`` says whether it was.
    ``peer`` is None until :func:`beside` fills it. ``shown_as_peer`` marks a row of
    ours against a peer (the peer in the floor column) whose figures another row's
    peer column already shows: it stays in the JSON, the tables leave it out.
    """
    ours_median = statistics.median(ours) if ours else math.nan
    floor_median = statistics.median(floor) if floor else math.nan
    ratio = ours_median / floor_median if floor_median else math.nan
    met = None
    if goal is not None and not math.isnan(ratio):
        met = ratio >= goal if higher_is_better else ratio <= goal
    return {
        "bench": bench,
        "case": case,
        "metric": metric,
        "unit": unit,
        "ours": list(ours),
        "floor": list(floor),
        "ours_median": ours_median,
        "floor_median": floor_median,
        "ours_spread": [min(ours), max(ours)] if ours else [],
        "floor_spread": [min(floor), max(floor)] if floor else [],
        "ours_p95": percentile(ours, 95),
        "floor_p95": percentile(floor, 95),
        "ratio": ratio,
        "goal": goal,
        "higher_is_better": higher_is_better,
        "met": met,
        "note": note,
        "peer": None,
        "shown_as_peer": shown_as_peer,
    }


def beside(
    row: dict[str, Any], name: str, samples: Sequence[float], *, goal: float | None = None
) -> dict[str, Any]:
    """Put ``name``'s samples of the same measurement beside ours in ``row``; returns ``row``.

    ``row["peer"]`` gets the peer's name, samples, median, spread, ``ratio`` (ours'
    median over the peer's) and, with ``goal`` (the most, or with the row's
    ``higher_is_better`` the least, that ratio may be), ``met``. Benchmarks that
    measure another implementation (``bench_gateway.py``) call it; the tables of
    :func:`print_table` and ``bench/readme_table.py`` show it in a column of its own.
    """
    median = statistics.median(samples) if samples else math.nan
    ratio = row["ours_median"] / median if median else math.nan
    met = None
    if goal is not None and not math.isnan(ratio):
        met = ratio >= goal if row["higher_is_better"] else ratio <= goal
    row["peer"] = {
        "name": name,
        "samples": list(samples),
        "median": median,
        "spread": [min(samples), max(samples)] if samples else [],
        "ratio": ratio,
        "goal": goal,
        "met": met,
    }
    return row


async def alternate(
    repeat: int,
    ours: Callable[[], Awaitable[float]],
    floor: Callable[[], Awaitable[float]],
) -> tuple[list[float], list[float]]:
    """Run each ``repeat`` times, alternating which goes first; the samples of each."""
    mine: list[float] = []
    base: list[float] = []
    for i in range(repeat):
        order = [(ours, mine), (floor, base)]
        for run, samples in order if i % 2 == 0 else reversed(order):
            samples.append(await run())
    return mine, base


class Timer:
    """``with Timer() as t: ...``; ``t.seconds`` afterwards (monotonic clock)."""

    def __enter__(self) -> Timer:
        self.start = time.perf_counter()
        self.seconds = math.nan
        return self

    def __exit__(self, *exc: object) -> None:
        self.seconds = time.perf_counter() - self.start


def _fmt(value: float, unit: str) -> str:
    if math.isnan(value):
        return "-"
    if unit == "s" and value < 0.1:
        return f"{value * 1000:.1f} ms"
    return f"{value:.3g} {unit}"


def _goal_text(goal: float | None, higher_is_better: bool, met: bool | None) -> str:
    if goal is None:
        return ""
    return f"{'≥' if higher_is_better else '≤'} {goal:g} " + ("met" if met else "MISSED")


def _peer_text(row: dict[str, Any]) -> str:
    peer = row.get("peer")
    if not peer:
        return ""
    ratio = "-" if math.isnan(peer["ratio"]) else f"{peer['ratio']:.2f}x"
    goal = _goal_text(peer["goal"], row["higher_is_better"], peer["met"])
    return f"{peer['name']} {_fmt(peer['median'], row['unit'])}, ours/it {ratio} {goal}".rstrip()


def print_table(rows: Sequence[dict[str, Any]]) -> None:
    """The rows as a table: case, metric, medians (spread), ratio, goal and, when a row
    has a peer (:func:`beside`), the peer's median and ours/peer in a last column.

    Rows ``shown_as_peer`` are left out (their figures are in that column)."""
    header: tuple[str, ...] = (
        "bench",
        "case",
        "metric",
        "ours (median, min-max)",
        "floor",
        "ratio",
        "goal",
    )
    peers = any(r.get("peer") for r in rows)
    if peers:
        header += ("beside ours (median, ours/it)",)
    lines = [header]
    hidden = 0
    for r in rows:
        if r.get("shown_as_peer"):
            hidden += 1
            continue
        spread = r["ours_spread"]
        ours = _fmt(r["ours_median"], r["unit"])
        if spread:
            ours += f" ({_fmt(spread[0], r['unit'])}-{_fmt(spread[1], r['unit'])})"
        goal = _goal_text(r["goal"], r["higher_is_better"], r["met"])
        ratio = "-" if math.isnan(r["ratio"]) else f"{r['ratio']:.2f}"
        cells: tuple[str, ...] = (r["bench"], r["case"], r["metric"], ours)
        cells += (_fmt(r["floor_median"], r["unit"]), ratio, goal)
        lines.append(cells + ((_peer_text(r),) if peers else ()))
    widths = [max(len(str(line[i])) for line in lines) for i in range(len(header))]
    for line in lines:
        padded = (str(cell).ljust(w) for cell, w in zip(line, widths, strict=True))
        print("  ".join(padded).rstrip())
    if hidden:
        rows_left = f"{hidden} row{'s' if hidden > 1 else ''}"
        print(f"({rows_left} of ours against a peer left out: the peer column has them)")


def write_json(
    name: str, rows: Sequence[dict[str, Any]], extra: dict[str, Any] | None = None
) -> Path:
    """``bench/results/<name>.json``: the rows and ``extra`` (machine, options)."""
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / f"{name}.json"
    path.write_text(json.dumps({"rows": list(rows), **(extra or {})}, indent=1) + "\n")
    return path


def docker_version() -> dict[str, str]:
    """The local engine's version and API version (``docker`` CLI), or {} without one."""
    template = "{{.Server.Version}} {{.Server.APIVersion}}"
    try:
        done = subprocess.run(
            ["docker", "version", "--format", template],
            capture_output=True,
            text=True,
            timeout=15,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return {}
    parts = done.stdout.split()
    if done.returncode != 0 or len(parts) != 2:
        return {}
    return {"docker": parts[0], "docker_api": parts[1]}


def machine() -> dict[str, Any]:
    """What the figures were measured on: CPUs, memory, OS, kernel, Docker, load average
    (1, 5, 15 minutes, when this is called). Every benchmark's JSON has it."""
    import os
    import platform

    info: dict[str, Any] = {"cpus": os.cpu_count(), "kernel": platform.release()}
    with contextlib.suppress(OSError):
        info["load_average"] = list(os.getloadavg())
    try:
        with open("/proc/meminfo") as f:
            info["mem_total_kb"] = int(f.readline().split()[1])
    except (OSError, ValueError, IndexError):
        pass
    try:
        with open("/etc/os-release") as f:
            for line in f:
                if line.startswith("PRETTY_NAME="):
                    info["os"] = line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    return {**info, **docker_version()}


def main_of(
    name: str,
    parse_args: Callable[[list[str] | None], Any],
    run: Callable[[Any], Coroutine[Any, Any, list[dict[str, Any]]]],
    argv: list[str] | None = None,
) -> int:
    """A benchmark's ``main``: measure, print the table, write ``results/<name>.json``
    (``<name>_quick.json`` with ``--quick``, so a smoke test keeps a full run's)."""
    args = parse_args(argv)
    rows = asyncio.run(run(args))
    print_table(rows)
    options = {k: sorted(v) if isinstance(v, set) else v for k, v in vars(args).items()}
    extra = {"machine": machine(), "options": options}
    path = write_json(name + ("_quick" if getattr(args, "quick", False) else ""), rows, extra)
    print(f"results written to {path}")
    return 0


def slope(xs: Sequence[float], ys: Sequence[float]) -> float:
    """Least-squares slope of ``ys`` over ``xs`` (e.g. seconds per extra container)."""
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sxx


def log(text: str) -> None:
    """Progress on stderr."""
    print(text, file=sys.stderr, flush=True)


def progress(text: str) -> None:
    """A progress line on stderr with the time of day."""
    print(f"{time.strftime('%H:%M:%S')} {text}", file=sys.stderr, flush=True)


def logged(label: str, run: Callable[[], Awaitable[float]]) -> Callable[[], Awaitable[float]]:
    """``run``, printing each sample to stderr as it comes."""

    async def wrapper() -> float:
        seconds = await run()
        print(f"{label}: {seconds:.3f} s", file=sys.stderr, flush=True)
        await asyncio.sleep(0.3)  # let the engine settle after removals
        return seconds

    return wrapper
