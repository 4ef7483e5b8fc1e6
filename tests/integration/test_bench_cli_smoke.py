"""The CLI benchmark (``bench/bench_cli.py``) in its quick form.

``--quick`` (a 20,000-line log, two runs of each command) as a subprocess against
the real Docker engine: it must exit 0 (nothing left behind, or it fails), print
its table and the verdict of each absolute goal, and write
``bench/results/cli_quick.json`` whose rows are well formed and finite. Speed goals
are not checked: these are not timed tests.
"""

from __future__ import annotations

import json
import math
import sys

import pytest

from tests.support.constants import REPO
from tests.support.processes import run

pytestmark = pytest.mark.docker

CASES = {
    "ls vs docker ps",
    "show vs docker ps",
    "agents vs docker ps",
    "--help vs docker ps",
    "ls via `jupyter cluster` vs docker ps",
    "logs of 20000 lines vs docker logs",
}


def test_the_quick_cli_benchmark_runs_and_reports() -> None:
    result = run((sys.executable, str(REPO / "bench" / "bench_cli.py"), "--quick"), timeout=420)
    assert result.returncode == 0, str(result)
    assert "ls vs docker ps: " in result.stdout and "goal: median ≤ 0.2 s" in result.stdout
    report = json.loads((REPO / "bench" / "results" / "cli_quick.json").read_text())
    assert report["options"]["quick"] is True and report["options"]["lines"] == 20_000
    rows = report["rows"]
    assert {r["case"] for r in rows} == CASES
    for row in rows:
        assert row["bench"] == "cli" and len(row["ours"]) == len(row["floor"]) == 2, row
        assert all(math.isfinite(v) and v > 0 for v in row["ours"] + row["floor"]), row
        assert math.isfinite(row["ratio"]) and row["ratio"] > 0, row
        if row["case"].startswith("logs"):
            assert row["goal"] == 1.2 and isinstance(row["met"], bool), row
        else:
            assert row["note"].startswith("goal: median ≤ 0.2 s ("), row
