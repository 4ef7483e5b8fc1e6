"""The scheduler benchmark (``bench/bench_scheduler.py``) in its quick form, alone and
through ``bench/run.py``: it runs and writes rows that are well formed and finite.

Speed goals are not checked: these are not timed tests.
"""

from __future__ import annotations

import json
import math
import sys
from typing import Any

from tests.support.constants import REPO
from tests.support.processes import run

RESULTS = REPO / "bench" / "results"


def _check_rows(rows: list[dict[str, Any]]) -> None:
    assert rows and all(r["bench"] == "scheduler" for r in rows)
    for row in rows:
        ours = row["ours"]
        assert isinstance(ours, list) and ours and all(math.isfinite(v) for v in ours), row
        if row["floor"]:
            assert all(v > 0 for v in ours), row
            assert math.isfinite(row["ratio"]) and row["ratio"] > 0, row
    cases = {r["case"] for r in rows}
    assert "c: 2000 sessions on 200 agents" in cases
    assert {"c: growth, sessions only", "c: growth, agents only"} <= cases


def test_the_quick_scheduler_benchmark_runs_and_reports() -> None:
    result = run(
        (sys.executable, str(REPO / "bench" / "bench_scheduler.py"), "--quick"), timeout=60
    )
    assert result.returncode == 0, str(result)
    assert "place_queue" in result.stdout
    report = json.loads((RESULTS / "scheduler_quick.json").read_text())
    assert report["options"]["quick"] is True and report["machine"]["cpus"] >= 1
    _check_rows(report["rows"])


def test_run_py_collects_the_rows_and_says_what_it_skipped() -> None:
    args = ("--only", "scheduler,kernel_start", "--quick")
    result = run((sys.executable, str(REPO / "bench" / "run.py"), *args), timeout=60)
    assert result.returncode == 0, str(result)
    assert "kernel_start: skipped" in result.stdout
    report = json.loads((RESULTS / "all_quick.json").read_text())
    assert report["date"] and report["machine"]["cpus"] >= 1
    assert report["options"]["only"] == "scheduler,kernel_start"
    assert list(report["modules"]["ran"]) == ["scheduler"]
    assert list(report["modules"]["skipped"]) == ["kernel_start"]
    _check_rows(report["rows"])
