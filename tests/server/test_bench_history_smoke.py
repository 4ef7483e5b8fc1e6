"""The history-listing benchmark (``bench/bench_history.py``) in its quick form.

``--quick`` (five requests of each kind) as a subprocess with its own ``jupyter
server`` on a store of 1,000 ended sessions: it must exit 0, print its table and
write ``bench/results/history_quick.json`` whose rows are well formed and finite
(each request checks it got the sessions it should), and the adaptive warm pool's
read of the same store a row of its own. Speed goals are not checked:
these are not timed tests.
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
    "GET sessions (active), 1000 ended",
    "GET sessions?state=ended&limit=50, 1000 ended",
    "GET sessions?all=1 (the whole history), 1000 ended",
    "adaptive warm pool's read at each refill, 1000 ended",
}


def test_the_quick_history_benchmark_runs_and_reports() -> None:
    script = REPO / "bench" / "bench_history.py"
    result = run((sys.executable, str(script), "--quick"), timeout=240)
    assert result.returncode == 0, str(result)
    assert "GET sessions?state=ended&limit=50, 1000 ended: " in result.stdout
    report = json.loads((REPO / "bench" / "results" / "history_quick.json").read_text())
    assert report["options"]["quick"] is True and report["options"]["ended"] == 1000
    rows = report["rows"]
    assert {r["case"] for r in rows} == CASES
    for row in rows:
        assert row["bench"] == "history" and len(row["ours"]) == len(row["floor"]) == 5, row
        assert all(math.isfinite(v) and v > 0 for v in row["ours"] + row["floor"]), row
        assert math.isfinite(row["ratio"]) and row["ratio"] > 0, row
    goals = [r for r in rows if r["note"].startswith("goal: median < 50 ms (")]
    assert len(goals) == 2
    (refill,) = [r for r in rows if r["case"].startswith("adaptive warm pool's read")]
    assert "goal: median < 10 ms (" in refill["note"]
