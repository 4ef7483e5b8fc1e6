"""The round-trip, log and server-load benchmark (``bench/bench_io.py``) in its quick form.

``--quick`` (20 cell round trips per transport, a log of 2,000 lines, 10 sessions,
5 SSE listeners) as a subprocess against the real Docker engine and its own
``jupyter server``: it must exit 0 (nothing left behind, or it fails), print its
table and write ``bench/results/io_quick.json`` whose rows are well formed and finite.
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
    "d: empty cell, direct",
    "d: empty cell, ssh",
    "e: log follow, REST",
    "e: log follow, ClusterSession.logs",
    "g: GET sessions, 0 sessions",
    "g: GET sessions, 10 sessions",
    "g: event to 5 SSE listeners",
    "g: server RSS, 10 sessions",
}


def test_the_quick_io_benchmark_runs_and_reports() -> None:
    result = run((sys.executable, str(REPO / "bench" / "bench_io.py"), "--quick"), timeout=240)
    assert result.returncode == 0, str(result)
    assert "e: log follow, REST" in result.stdout
    report = json.loads((REPO / "bench" / "results" / "io_quick.json").read_text())
    assert report["options"]["quick"] is True and report["machine"]["cpus"] >= 1
    rows = report["rows"]
    assert {r["case"] for r in rows} == CASES
    for row in rows:
        assert row["bench"] == "io" and row["ours"], row
        assert all(math.isfinite(v) for v in row["ours"] + row["floor"]), row
        if row["case"].startswith("g: server RSS"):
            continue  # growth per session (may be about 0): no floor
        assert min(row["ours"] + row["floor"]) > 0, row
        assert row["floor"] and math.isfinite(row["ratio"]) and row["ratio"] > 0, row
        assert row["ours_spread"][0] <= row["ours_median"] <= row["ours_spread"][1]
    counts = {r["case"]: len(r["ours"]) for r in rows if r["metric"] == "median"}
    assert counts == {"d: empty cell, direct": 20, "d: empty cell, ssh": 20}
