"""The benchmark beside gateway_provisioners (``bench/bench_gateway.py``) in its quick form.

``--quick`` (one start/shutdown of each kind, 20 empty cells each) as a subprocess
against the real Docker engine: it must exit 0 (nothing left behind, or it fails),
print its table and write ``bench/results/gateway_quick.json`` whose rows are well
formed and finite. gateway_provisioners is not a dependency of the project: when
$JC_BENCH_GATEWAY_PYTHON names a Python that has it, its rows must be there too;
otherwise the run must say that its column was skipped and why, and still measure
ours against the floors. Speed goals are not checked: these are not timed tests.
"""

from __future__ import annotations

import json
import math
import os
import sys

import pytest

from tests.support.constants import REPO
from tests.support.processes import run

pytestmark = pytest.mark.docker

OURS = {
    ("start → kernel_info, ours size 1", "seconds"),
    ("shutdown_kernel, ours size 1", "seconds"),
    ("empty cell, ours size 1", "median"),
    ("empty cell, ours size 1", "p95"),
}
GATEWAY = {
    ("start → kernel_info, gateway_provisioners", "seconds"),
    ("start → kernel_info, ours vs gateway_provisioners", "seconds"),
    ("shutdown_kernel, gateway_provisioners", "seconds"),
    ("shutdown_kernel to gone, gateway_provisioners", "seconds"),
    ("shutdown_kernel, ours vs gateway_provisioners", "seconds"),
    ("empty cell, gateway_provisioners", "median"),
    ("empty cell, gateway_provisioners", "p95"),
    ("empty cell, ours vs gateway_provisioners", "median"),
    ("empty cell, ours vs gateway_provisioners", "p95"),
}


def test_the_quick_gateway_benchmark_runs_and_reports() -> None:
    """Exit 0, the table printed, one well-formed row per case in the JSON."""
    gateway = os.environ.get("JC_BENCH_GATEWAY_PYTHON", "")
    script = REPO / "bench" / "bench_gateway.py"
    result = run((sys.executable, str(script), "--quick", "--gateway-python", gateway), timeout=240)
    assert result.returncode == 0, str(result)
    assert "start → kernel_info, ours size 1" in result.stdout
    if not gateway:
        assert "gateway_provisioners column skipped: gateway_provisioners is not installed" in (
            result.stdout
        )
    report = json.loads((REPO / "bench" / "results" / "gateway_quick.json").read_text())
    assert report["options"]["quick"] is True and report["machine"]["cpus"] >= 1
    rows = report["rows"]
    assert {(r["case"], r["metric"]) for r in rows} == (OURS | GATEWAY if gateway else OURS)
    for row in rows:
        assert row["bench"] == "gateway" and row["ours"] and row["floor"], row
        assert len(row["ours"]) == len(row["floor"]), row
        assert all(math.isfinite(v) and v > 0 for v in row["ours"] + row["floor"]), row
        assert math.isfinite(row["ratio"]) and row["ratio"] > 0, row
        assert row["ours_spread"][0] <= row["ours_median"] <= row["ours_spread"][1]
    if gateway:
        (down,) = [r for r in rows if r["case"] == "shutdown_kernel, ours vs gateway_provisioners"]
        assert down["goal"] == 1.0 and isinstance(down["met"], bool)
