"""The queue benchmark (``bench/bench_queue.py``) in its quick form: it runs the real
store and scheduling loop on fake agents and writes rows that are well formed and
finite. Speed goals are not checked: these are not timed tests."""

from __future__ import annotations

import json
import math
import sys

from tests.support.constants import REPO
from tests.support.processes import run

RESULTS = REPO / "bench" / "results"


def test_the_quick_queue_benchmark_runs_and_reports() -> None:
    result = run((sys.executable, str(REPO / "bench" / "bench_queue.py"), "--quick"), timeout=300)
    assert result.returncode == 0, str(result)
    report = json.loads((RESULTS / "queue_quick.json").read_text())
    assert report["options"]["quick"] is True and report["options"]["order"] == "fair-share"
    rows = report["rows"]
    assert [r["metric"].split(" (")[0] for r in rows] == [
        rows[0]["metric"].split(" (")[0],
        "page(owner)",
        "submit to PREPARING",
    ]
    assert rows[0]["metric"].startswith("place all that fit (")
    for row in rows:
        assert row["bench"] == "queue" and row["ours"] and row["floor"], row
        assert all(math.isfinite(v) and v > 0 for v in row["ours"] + row["floor"]), row
        assert math.isfinite(row["ratio"]) and row["ratio"] > 0, row
        assert "goal <" in row["note"], row
