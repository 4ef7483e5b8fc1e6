"""The benchmark of following a busy session (``bench/bench_follow.py``) in its quick form.

``--quick`` (a size-2 session whose containers print 50 lines a second, one round of
3 s windows) as a subprocess against the real Docker engine and its own ``jupyter
server``: it must exit 0 (nothing left behind, or it fails), and its rows in
``bench/results/follow_quick.json`` must be well formed, with the Lab's followers
having read the logs being written. Speed goals are not checked here.
"""

from __future__ import annotations

import json
import math
import sys

import pytest

from tests.support.constants import REPO
from tests.support.processes import run

pytestmark = pytest.mark.docker

SHAPE = "2 containers x 50 lines/s"


def test_the_quick_follow_benchmark_runs_and_reports() -> None:
    result = run((sys.executable, str(REPO / "bench" / "bench_follow.py"), "--quick"), timeout=240)
    assert result.returncode == 0, str(result)
    report = json.loads((REPO / "bench" / "results" / "follow_quick.json").read_text())
    assert report["options"]["quick"] is True and report["options"]["size"] == 2
    rows = {(r["case"], r["metric"]): r for r in report["rows"]}
    assert set(rows) == {
        (f"{SHAPE}, nobody follows", "server CPU"),
        (f"{SHAPE}, a Lab follows events, stats, every log", "server CPU over idle"),
        (f"{SHAPE}, followers gone", "server CPU"),
    }
    for row in rows.values():
        assert row["bench"] == "follow" and len(row["ours"]) == 1, row
        assert all(math.isfinite(v) for v in row["ours"] + row["floor"]), row
    lab = rows[(f"{SHAPE}, a Lab follows events, stats, every log", "server CPU over idle")]
    # the Lab's followers and docker logs -f both read what the containers wrote
    assert lab["log_written"] == 2 * 50 * 80
    assert lab["log_read"] > lab["log_written"] / 2, lab
    assert lab["floor"][0] > 0 and math.isfinite(lab["ratio"]), lab
    assert "goal: < 0.05 cores" in lab["note"] and "stats samples" in lab["note"], lab
