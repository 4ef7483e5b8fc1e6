"""The soak benchmark (``bench/bench_soak.py``) in a short run: it works end to end.

Three measured cycles after one warm-up, as a subprocess against its own real
Jupyter server and the real Docker engine: the script must exit 0 (every stream
behaved, nothing was left, no bound broken), write its JSON with every figure,
stop its server and leave no container or network of its manager id.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.support.constants import REPO
from tests.support.docker import assert_nothing_left, remove_leftovers
from tests.support.processes import run

pytestmark = pytest.mark.docker

SAMPLE_FIELDS = {
    "cycle",
    "seconds",
    "rss_mb",
    "fds",
    "fd_kinds",
    "threads",
    "children",
    "containers",
    "networks",
    "volumes",
    "containers_total",
    "networks_total",
    "volumes_total",
    "volumes_left",
}
SUMMARY_FIELDS = {
    "rss_growth_mb",
    "rss_slope_kb_per_cycle",
    "fd_growth",
    "thread_growth",
    "fd_max",
    "thread_max",
    "fd_settle_seconds",
}


def test_a_short_soak_passes_and_reports(tmp_path: Path) -> None:
    out = tmp_path / "soak.json"
    args = ("--cycles", "3", "--warmup", "1", "--json", str(out))
    result = run((sys.executable, str(REPO / "bench" / "bench_soak.py"), *args), timeout=240)
    report = json.loads(out.read_text()) if out.exists() else {}
    manager_id = report.get("manager_id")
    if manager_id:
        assert_nothing_left(manager_id, *remove_leftovers(manager_id))
    assert result.returncode == 0, str(result)
    assert "verdict: OK" in result.stdout

    assert report["ok"] is True and report["violations"] == [] and report["error"] is None
    assert (report["cycles"], report["warmup"], report["size"]) == (3, 1, 3)
    assert set(report["bounds"]) == {
        "labelled_objects",
        "fd_growth",
        "thread_growth",
        "rss_growth_mb",
    }
    assert set(report["summary"]) == SUMMARY_FIELDS
    assert [s["cycle"] for s in report["samples"]] == [1, 2, 3]
    for sample in [report["baseline"], *report["samples"]]:
        assert set(sample) == SAMPLE_FIELDS
        assert sample["rss_mb"] > 10 and sample["fds"] > 0 and sample["threads"] >= 1
        assert sum(sample["fd_kinds"].values()) == sample["fds"]
        assert (sample["containers"], sample["networks"], sample["volumes"]) == (0, 0, 0)
        assert sample["seconds"] > 0
    server = Path(f"/proc/{report['server_pid']}/cmdline")
    alive = server.exists() and b"jupyter_server" in server.read_bytes()
    assert not alive, "the bench left its server running"
