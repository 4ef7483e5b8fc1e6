"""The README's performance table made from ``bench/results/all.json``
(``bench/readme_table.py``): the machine line, every cell of every row (a peer
column, a missed goal, a NaN floor, a throughput), the block put between the
markers and nothing else changed, ``--check``, and partial runs refused.
Pure: a small all.json written here, no benchmark run, no Docker."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import pytest

from tests.support.bench_modules import load_bench_module
from tests.support.constants import REPO

harness = load_bench_module("bench_harness_for_readme_test", "bench/common/harness.py")
table = load_bench_module("bench_readme_table_under_test", "bench/readme_table.py")
GP = "gateway_provisioners"
D = table.DASH  # an en dash: no figure, no goal
MACHINE_LINE = (
    "Measured by `bench/run.py` on 2026-12-02 at 15:39 UTC on a machine with 2 CPUs, "
    "23.5 GiB of memory, Docker 20.10.24 (API 1.41), Debian GNU/Linux 12 (bookworm), "
    "Linux 6.1.0; load average (1 / 5 / 15 min) 1.25 / 1.00 / 0.50 at the start and "
    "0.50 / 0.75 / 1.00 at the end. Not run here: kernel_start, soak. Failed: multiagent."
)
HEADER = [
    "case",
    "ours (median)",
    "floor",
    "ours/floor",
    "goal",
    "",
    f"{GP} (median; ours/theirs)",
]
EXPECTED = [
    [
        "gateway: start → kernel_info, ours size 1 (cpu 1, mem 512m)",
        "1.92 s",
        "1.44 s",
        "1.33",
        D,
        D,
        "1.75 s; ours/theirs 1.10",
    ],
    [
        "gateway: shutdown_kernel, ours size 1",
        "35.7 ms",
        "0.165 s",
        "0.22",
        D,
        D,
        "0.234 s; ours/theirs 0.15 (goal ≤ 1: met)",
    ],
    ["launch: a: launch to ready, size 1", "1.68 s", "1.48 s", "1.14", "≤ 1.1", "missed", D],
    [
        "scheduler: c: growth, sessions only, exponent k (floor's k 0.62)",
        "0.832",
        D,
        D,
        D,
        D,
        D,
    ],
    [
        "io: e: log follow, REST, throughput",
        "162k lines/s",
        "131k lines/s",
        "1.24",
        "≥ 0.8",
        "met",
        D,
    ],
    [
        "stats: 1 follower \\| 16 containers, server CPU",
        "0.00650 cores",
        "0.0165 cores",
        "0.39",
        "≤ 1",
        "met",
        D,
    ],
    ["history: a goal, no floor measured", "9.30 ms", D, D, "≤ 1", "not measured", D],
]


def _report(**options: Any) -> dict[str, Any]:
    start = harness.result(
        "gateway",
        "start → kernel_info, ours size 1",
        "seconds",
        [1.92],
        [1.44],
        note="cpu 1, mem 512m",
    )
    harness.beside(start, GP, [1.75])
    down = harness.result("gateway", "shutdown_kernel, ours size 1", "seconds", [0.0357], [0.165])
    harness.beside(down, GP, [0.234], goal=1.0)
    vs = harness.result(
        "gateway",
        f"start → kernel_info, ours vs {GP}",
        "seconds",
        [1.92],
        [1.75],
        shown_as_peer=True,
    )
    metric = "exponent k (floor's k 0.62)"
    rows = [
        start,
        down,
        vs,
        harness.result("launch", "a: launch to ready, size 1", "seconds", [1.68], [1.48], goal=1.1),
        harness.result("scheduler", "c: growth, sessions only", metric, [0.832], [], unit=""),
        harness.result(
            "io",
            "e: log follow, REST",
            "throughput",
            [162_000.0],
            [131_000.0],
            unit="lines/s",
            goal=0.8,
            higher_is_better=True,
        ),
        harness.result(
            "stats",
            "1 follower | 16 containers",
            "server CPU",
            [0.0065],
            [0.0165],
            unit="cores",
            goal=1.0,
        ),
        harness.result("history", "a goal, no floor measured", "seconds", [0.0093], [], goal=1.0),
    ]
    return {
        "rows": rows,
        "machine": {
            "cpus": 2,
            "kernel": "6.1.0",
            "load_average": [0.5, 0.75, 1.0],
            "mem_total_kb": 24683584,
            "os": "Debian GNU/Linux 12 (bookworm)",
            "docker": "20.10.24",
            "docker_api": "1.41",
            "load_average_at_start": [1.25, 1.0, 0.5],
        },
        "options": {"only": "", "quick": False, "repeat": None, **options},
        "date": "2026-12-02T15:39:15+00:00",
        "modules": {
            "ran": {"gateway": 60.0},
            "skipped": {"soak": "no rows", "kernel_start": "no rows"},
            "failed": {"multiagent": "RuntimeError: no agents"},
        },
    }


def _write(tmp_path: Path, report: dict[str, Any]) -> Path:
    path = tmp_path / "all.json"
    path.write_text(json.dumps(report, indent=1))  # NaN as the benchmarks write it
    return path


def _cells(line: str) -> list[str]:
    assert line.startswith("|") and line.endswith("|"), line
    return [cell.strip() for cell in re.split(r"(?<!\\)\|", line)[1:-1]]


def test_the_block_has_the_machine_line_and_every_cell(tmp_path: Path) -> None:
    report = json.loads(_write(tmp_path, _report()).read_text())
    assert math.isnan(report["rows"][4]["floor_median"])  # the fixture has a NaN floor
    lines = table.block(report).split("\n")
    assert lines[0] == "<!-- perf-table:start -->" and lines[-1] == "<!-- perf-table:end -->"
    assert lines[1] == MACHINE_LINE
    assert lines[2] == "" and lines[-2] == ""
    assert _cells(lines[3]) == HEADER
    assert _cells(lines[4]) == ["---", "---:", "---:", "---:", "---", "---", "---"]
    body = lines[5:-2]
    assert len(body) == len(EXPECTED)  # the row shown as a peer is left out
    for line, expected in zip(body, EXPECTED, strict=True):
        assert _cells(line) == expected
    assert table.block(report) == table.block(json.loads(json.dumps(report)))  # deterministic


def test_without_any_peer_there_is_no_peer_column(tmp_path: Path) -> None:
    report = _report()
    report["rows"] = [r for r in report["rows"] if not r["peer"] and not r["shown_as_peer"]]
    lines = table.block(report).split("\n")
    assert _cells(lines[3]) == HEADER[:-1]
    assert [_cells(line) for line in lines[5:-2]] == [row[:-1] for row in EXPECTED[2:]]


@pytest.mark.parametrize(
    ("value", "unit", "text"),
    [
        (0.0065, "cores", "0.00650 cores"),
        (1_500_000.0, "lines/s", "1.50M lines/s"),
        (950.0, "lines/s", "950 lines/s"),
        (9.996, "s", "10.0 s"),
        (0.09996, "s", "100 ms"),
        (-0.02, "MB", "-0.0200 MB"),
        (12.34, "KB", "12.3 KB"),
        (math.nan, "s", D),
    ],
)
def test_values_are_written_in_the_tables_units(value: float, unit: str, text: str) -> None:
    assert table.fmt_value(value, unit) == text


def test_main_rewrites_only_the_block_and_check_says_whether_it_is_current(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = _write(tmp_path, _report())
    readme = tmp_path / "README.md"
    before, after = "# Project\n\n## Performance\n\nText.\n\n", "\n\nMisses.\n\n## Next\n"
    old = "<!-- perf-table:start -->\n| hand | written |\n<!-- perf-table:end -->"
    readme.write_text(before + old + after)
    args = ["--results", str(results), "--readme", str(readme)]
    assert table.main([*args, "--check"]) == 1
    assert "-| hand | written |" in capsys.readouterr().out
    assert readme.read_text() == before + old + after  # --check writes nothing
    assert table.main(args) == 0
    assert readme.read_text() == before + table.block(_report()) + after
    assert table.main([*args, "--check"]) == 0
    assert table.main(args) == 0 and readme.read_text() == before + table.block(_report()) + after


def test_partial_runs_and_missing_markers_are_refused(tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_text("<!-- perf-table:start -->\nold\n<!-- perf-table:end -->\n")
    partial = _write(tmp_path, _report(only="scheduler"))
    args = ["--results", str(partial), "--readme", str(readme)]
    assert table.main(args) == 2 and "old" in readme.read_text()
    assert table.main([*args, "--partial"]) == 0 and "old" not in readme.read_text()
    readme.write_text("no markers here\n")
    assert table.main([*args, "--partial"]) == 2
    assert readme.read_text() == "no markers here\n"


def test_the_readme_has_one_block_around_its_performance_table() -> None:
    text = (REPO / "README.md").read_text()
    start, end = table.current_block(text)
    section = text[text.index("## Performance") :]
    assert text.index("## Performance") < start
    assert "\n| case" in text[start:end] and "\n## " not in text[start:end]
    assert section.index("bench/readme_table.py") < section.index("\n## ", 1)
