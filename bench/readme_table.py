"""Rewrite the README's performance table from ``bench/results/all.json``.

Run as ``.venv/bin/python bench/readme_table.py [--results FILE] [--readme FILE]
[--check] [--stdout] [--partial]``, after ``.venv/bin/python bench/run.py``.

The table sits in ``README.md`` between the lines ``<!-- perf-table:start -->`` and
``<!-- perf-table:end -->``; everything between them is replaced by a line saying
when and on what machine the rows were measured (``all.json``'s date and
``machine``: CPUs, memory, Docker, OS, kernel, load average at the start and end),
then one table line per row: case (bench, case, metric unless it is just
"seconds", and the row's note), ours' median, the floor's, ours/floor, the goal,
met or missed and, when any row has a peer (``harness.beside``: gateway_provisioners
beside ours), the peer's median and ours/peer. Rows marked ``shown_as_peer`` are
left out (their figures are in that column). Nothing else in the README changes,
and the output depends only on ``all.json``.

``--check`` changes nothing and exits 1 if the README's table is not what
``all.json`` gives (with a diff); ``--stdout`` prints the generated block instead.
A run of ``run.py`` with ``--only`` or ``--quick`` covers only part of the
benchmarks: it is refused unless ``--partial`` is given. Not for CI: the figures
are the measuring machine's.
"""

from __future__ import annotations

import argparse
import datetime
import difflib
import json
import math
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
START = "<!-- perf-table:start -->"
END = "<!-- perf-table:end -->"
DASH = "\u2013"  # an en dash, as the hand-written tables have


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=HERE / "results" / "all.json")
    parser.add_argument("--readme", type=Path, default=HERE.parent / "README.md")
    parser.add_argument("--check", action="store_true", help="exit 1 if the table differs")
    parser.add_argument("--stdout", action="store_true", help="print the block, write nothing")
    parser.add_argument("--partial", action="store_true", help="accept an --only/--quick run")
    return parser.parse_args(argv)


def _missing(value: float | None) -> bool:
    return value is None or math.isnan(value)


def sig3(value: float) -> str:
    """``value`` with three significant digits, trailing zeros kept (0.00650, 1.68, 162)."""
    if value == 0:
        return "0"
    digits = 2 - math.floor(math.log10(abs(value)))
    digits = 2 - math.floor(math.log10(abs(round(value, digits)) or 1))  # 9.996 → 10.0
    return f"{value:.{max(digits, 0)}f}"


def fmt_value(value: float | None, unit: str) -> str:
    """A median in the table's units: seconds under 0.1 s as ms, rates in k or M."""
    if _missing(value):
        return DASH
    assert value is not None
    if unit == "s":
        return f"{sig3(value * 1000)} ms" if abs(value) < 0.1 else f"{sig3(value)} s"
    if unit.endswith("/s") and abs(value) >= 1000:
        big = abs(value) >= 1e6
        return f"{sig3(value / (1e6 if big else 1e3))}{'M' if big else 'k'} {unit}"
    return f"{sig3(value)} {unit}".rstrip()


def fmt_ratio(ratio: float | None) -> str:
    """A ratio: two decimals under 10, three significant digits above."""
    if _missing(ratio):
        return DASH
    assert ratio is not None
    return f"{ratio:.2f}" if abs(ratio) < 10 else sig3(ratio)


def fmt_goal(goal: float | None, higher_is_better: bool) -> str:
    """``≤ 1.05`` (or ``≥ 0.8`` for a throughput), or a dash without a goal."""
    return DASH if goal is None else f"{'≥' if higher_is_better else '≤'} {goal:g}"


def fmt_met(goal: float | None, met: bool | None) -> str:
    """met / missed; a dash without a goal, "not measured" when the ratio is missing."""
    if goal is None:
        return DASH
    return "not measured" if met is None else ("met" if met else "missed")


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def case_cell(row: dict[str, Any]) -> str:
    """``bench: case, metric (note)``; a metric of "seconds" and a note already in the
    metric are left out."""
    text = f"{row['bench']}: {row['case']}"
    metric, note = row.get("metric", ""), row.get("note", "")
    if metric and metric != "seconds":
        text += f", {metric}"
    if note and note not in metric:
        text += f" ({note})"
    return _cell(text)


def peer_cell(row: dict[str, Any], with_name: bool) -> str:
    """The peer's median and ours/peer (with its goal and verdict if it has one)."""
    peer = row.get("peer")
    if not peer:
        return DASH
    text = f"{peer['name']} " if with_name else ""
    text += f"{fmt_value(peer['median'], row['unit'])}; ours/theirs {fmt_ratio(peer['ratio'])}"
    if peer.get("goal") is not None:
        goal = fmt_goal(peer["goal"], row["higher_is_better"])
        text += f" (goal {goal}: {fmt_met(peer['goal'], peer.get('met'))})"
    return _cell(text)


def machine_line(report: dict[str, Any]) -> str:
    """When and on what the rows were measured, and what the run left out, in one line."""
    parts = []
    m = report.get("machine", {})
    if m.get("cpus"):
        parts.append(f"{m['cpus']} CPUs")
    if m.get("mem_total_kb"):
        parts.append(f"{m['mem_total_kb'] / 1024**2:.1f} GiB of memory")
    if m.get("docker"):
        api = f" (API {m['docker_api']})" if m.get("docker_api") else ""
        parts.append(f"Docker {m['docker']}{api}")
    if m.get("os"):
        parts.append(m["os"])
    if m.get("kernel"):
        parts.append(f"Linux {m['kernel']}")
    text = "Measured by `bench/run.py`"
    options = report.get("options", {})
    flags = [f"--only {options['only']}"] if options.get("only") else []
    flags += ["--quick"] if options.get("quick") else []
    flags += [f"--repeat {options['repeat']}"] if options.get("repeat") else []
    if flags:
        text = f"Measured by `bench/run.py {' '.join(flags)}`"
    if report.get("date"):
        date = datetime.datetime.fromisoformat(report["date"]).astimezone(datetime.timezone.utc)
        text += f" on {date:%Y-%m-%d} at {date:%H:%M} UTC"
    text += f" on a machine with {', '.join(parts)}" if parts else ""
    loads = [
        ("at the start", m.get("load_average_at_start")),
        ("at the end", m.get("load_average")),
    ]
    said = [f"{' / '.join(f'{x:.2f}' for x in v)} {when}" for when, v in loads if v]
    if said:
        text += f"; load average (1 / 5 / 15 min) {' and '.join(said)}"
    modules = report.get("modules", {})
    for label, key in (("Not run here", "skipped"), ("Failed", "failed")):
        if modules.get(key):
            text += f". {label}: {', '.join(sorted(modules[key]))}"
    return text + "."


def block(report: dict[str, Any]) -> str:
    """The markers and everything between them: the machine line and the table."""
    rows = [r for r in report["rows"] if not r.get("shown_as_peer")]
    names = sorted({r["peer"]["name"] for r in rows if r.get("peer")})
    header = ["case", "ours (median)", "floor", "ours/floor", "goal", ""]
    if names:
        header.append(f"{names[0]} (median; ours/theirs)" if len(names) == 1 else "beside ours")
    lines = ["|" + "|".join(f" {h} " if h else " " for h in header) + "|"]
    lines.append("| --- | ---: | ---: | ---: | --- | --- |" + (" --- |" if names else ""))
    for r in rows:
        cells = [
            case_cell(r),
            fmt_value(r["ours_median"], r["unit"]),
            fmt_value(r["floor_median"], r["unit"]),
            fmt_ratio(r["ratio"]),
            fmt_goal(r["goal"], r["higher_is_better"]),
            fmt_met(r["goal"], r["met"]),
        ]
        if names:
            cells.append(peer_cell(r, with_name=len(names) > 1))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join([START, machine_line(report), "", *lines, "", END])


def current_block(readme: str) -> tuple[int, int]:
    """Where the block is in the README text (start of START, end of END)."""
    if readme.count(START) != 1 or readme.count(END) != 1:
        raise ValueError(f"the README must have one {START} line and one {END} line")
    start, end = readme.index(START), readme.index(END) + len(END)
    if end < start:
        raise ValueError(f"{END} comes before {START}")
    return start, end


def rewrite(readme: str, report: dict[str, Any]) -> str:
    """The README text with its performance table made from ``report``."""
    start, end = current_block(readme)
    return readme[:start] + block(report) + readme[end:]


def main(argv: list[str] | None = None) -> int:
    """Entry point: 0 when written (or, with ``--check``, up to date), 1 when ``--check``
    finds a difference, 2 when the results or the README cannot be used."""
    args = parse_args(argv)
    try:
        report = json.loads(args.results.read_text())
        options = report.get("options", {})
        if (options.get("only") or options.get("quick")) and not args.partial:
            raise ValueError(f"{args.results} is of a partial run (--only/--quick); --partial")
        if args.stdout:
            print(block(report))
            return 0
        readme = args.readme.read_text()
        text = rewrite(readme, report)
    except (OSError, ValueError, KeyError) as exc:
        print(f"readme_table: {exc}", file=sys.stderr)
        return 2
    if args.check:
        if text == readme:
            return 0
        diff = difflib.unified_diff(
            readme.splitlines(), text.splitlines(), "README.md", "from " + args.results.name
        )
        print("\n".join(diff))
        return 1
    if text != readme:
        args.readme.write_text(text)
    print(f"{args.readme}: performance table from {args.results}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
