"""What every benchmark shares: alternating runs, medians and spread, ratios, goals, output.

Each benchmark measures *ours* against a *floor* (the least any implementation could
take for the same work on the same machine) in the same run, alternating which goes
first, and reports ``ours/floor`` (or ``ours/floor`` of a throughput, where higher
is better). :func:`result` turns the samples into one row; :func:`print_table` and
:func:`write_json` report rows; :func:`main_of` is a benchmark's ``main``;
``bench/run.py`` runs every benchmark and collects their rows into one table and
``bench/results/all.json``. Also progress lines on stderr (:func:`log`,
:func:`progress`, :func:`logged`) and the least-squares :func:`slope` that the
launch, soak and scheduler benchmarks fit. Used by every entry script.
"""

from __future__ import annotations

import asyncio
import json
import math
import statistics
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
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
) -> dict[str, Any]:
    """One row: medians, spread (min-max), p95 and the ratio ours/floor of the medians.

    ``goal`` is the most ``ours/floor`` may be (or, with ``higher_is_better``, the
    least: e.g. 0.8 of the floor's throughput); ``met`` says whether it was.
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
    }


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


def print_table(rows: Sequence[dict[str, Any]]) -> None:
    """The rows as a table: case, metric, medians (spread), ratio, goal."""
    header = ("bench", "case", "metric", "ours (median, min-max)", "floor", "ratio", "goal")
    lines = [header]
    for r in rows:
        spread = r["ours_spread"]
        ours = _fmt(r["ours_median"], r["unit"])
        if spread:
            ours += f" ({_fmt(spread[0], r['unit'])}-{_fmt(spread[1], r['unit'])})"
        goal = ""
        if r["goal"] is not None:
            sign = "≥" if r["higher_is_better"] else "≤"
            goal = f"{sign} {r['goal']:g} " + ("met" if r["met"] else "MISSED")
        ratio = "-" if math.isnan(r["ratio"]) else f"{r['ratio']:.2f}"
        lines.append(
            (
                r["bench"],
                r["case"],
                r["metric"],
                ours,
                _fmt(r["floor_median"], r["unit"]),
                ratio,
                goal,
            )
        )
    widths = [max(len(str(line[i])) for line in lines) for i in range(len(header))]
    for line in lines:
        print("  ".join(str(cell).ljust(w) for cell, w in zip(line, widths, strict=True)))


def write_json(
    name: str, rows: Sequence[dict[str, Any]], extra: dict[str, Any] | None = None
) -> Path:
    """``bench/results/<name>.json``: the rows and ``extra`` (machine, options)."""
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / f"{name}.json"
    path.write_text(json.dumps({"rows": list(rows), **(extra or {})}, indent=1) + "\n")
    return path


def machine() -> dict[str, Any]:
    """What the figures were measured on: CPUs, memory, kernel, load."""
    import os
    import platform

    info: dict[str, Any] = {"cpus": os.cpu_count(), "kernel": platform.release()}
    try:
        info["load_average"] = list(os.getloadavg())
        with open("/proc/meminfo") as f:
            info["mem_total_kb"] = int(f.readline().split()[1])
    except OSError:
        pass
    return info


def main_of(
    name: str,
    parse_args: Callable[[list[str] | None], Any],
    run: Callable[[Any], Awaitable[list[dict[str, Any]]]],
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
