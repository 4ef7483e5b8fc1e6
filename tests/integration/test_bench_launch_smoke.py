"""The launch/terminate/concurrent-launch benchmark (``bench/bench_launch.py``) in its quick form.

``--quick`` (sizes 1 and 2, one run of each kind, terminate at size 1, 2 concurrent
size-2 launches, the log tails' cost at size 2) as a subprocess against the real
Docker engine: it must exit 0 (nothing left behind, or it fails), print its table
and write ``bench/results/launch_quick.json`` whose rows are well formed and finite.
Speed goals are not checked: these are not timed tests.
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
    "a: launch to ready, size 1",
    "a: launch to ready, size 2",
    "b: shutdown_kernel, size 1",
    "b: shutdown_kernel, size 2",
    "a: slope over sizes 1,2",
    "b: terminate to gone, size 1",
    "f: 2 concurrent size-2 launches",
    "l: shutdown_kernel, size 2, log tails kept",
}


def test_the_quick_launch_benchmark_runs_and_reports() -> None:
    """Exit 0, the table printed, one well-formed row per case in the JSON."""
    script = REPO / "bench" / "bench_launch.py"
    result = run((sys.executable, str(script), "--quick"), timeout=180)
    assert result.returncode == 0, str(result)
    assert "a: launch to ready, size 1" in result.stdout
    report = json.loads((REPO / "bench" / "results" / "launch_quick.json").read_text())
    assert report["options"]["quick"] is True and report["machine"]["cpus"] >= 1
    rows = report["rows"]
    assert {r["case"] for r in rows} == CASES
    for row in rows:
        assert row["bench"] == "launch" and len(row["ours"]) == len(row["floor"]) == 1, row
        assert all(math.isfinite(v) for v in row["ours"] + row["floor"]), row
        assert math.isfinite(row["ratio"]), row
        if not row["case"].startswith("a: slope"):  # a slope may be about 0 or negative
            assert min(row["ours"] + row["floor"]) > 0 and row["ratio"] > 0, row
        assert row["ours_spread"][0] <= row["ours_median"] <= row["ours_spread"][1]
