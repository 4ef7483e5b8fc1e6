"""The stats-serving benchmark (``bench/bench_stats.py``) in its quick form.

``--quick`` (a size-4 session, one round of 3 s windows) as a subprocess against
the real Docker engine and its own ``jupyter server``: it must exit 0 (nothing left
behind, or it fails), print its table and write ``bench/results/stats_quick.json``
whose rows are well formed and finite. Speed goals are not checked: these are not
timed tests.
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
    ("4 containers, nobody watches", "server CPU"),
    ("4 containers, 1 follower", "server CPU over idle"),
    ("4 containers, 5 followers", "server CPU over idle"),
    ("4 containers, followers gone", "server CPU"),
    ("4 containers, 1 follower", "server RSS over idle"),
    ("4 containers, 5 followers", "server RSS over idle"),
    ("4 containers, followers gone", "server RSS over idle"),
}


def test_the_quick_stats_benchmark_runs_and_reports() -> None:
    result = run((sys.executable, str(REPO / "bench" / "bench_stats.py"), "--quick"), timeout=240)
    assert result.returncode == 0, str(result)
    assert "4 containers, 1 follower" in result.stdout
    report = json.loads((REPO / "bench" / "results" / "stats_quick.json").read_text())
    assert report["options"]["quick"] is True and report["options"]["size"] == 4
    assert report["machine"]["cpus"] >= 1
    rows = report["rows"]
    assert {(r["case"], r["metric"]) for r in rows} == CASES
    for row in rows:
        assert row["bench"] == "stats" and len(row["ours"]) == 1, row
        assert all(math.isfinite(v) for v in row["ours"] + row["floor"]), row
        assert row["ours_spread"][0] <= row["ours_median"] <= row["ours_spread"][1]
        if row["metric"] == "server CPU":
            assert row["ours"][0] >= 0, row
        if row["metric"] == "server CPU over idle":  # against docker stats' own CPU
            assert len(row["floor"]) == 1 and row["floor"][0] > 0, row
            assert math.isfinite(row["ratio"]), row
    notes = {r["case"]: r["note"] for r in rows if r["metric"].startswith("server CPU")}
    followed = notes["4 containers, 1 follower"]
    assert "samples per follower" in followed and not followed.startswith("0 "), followed
    assert "back to idle" in notes["4 containers, followers gone"]
