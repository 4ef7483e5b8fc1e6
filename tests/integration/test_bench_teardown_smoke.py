"""Removing containers of one network at once (``bench/bench_teardown.py``), size 2, once.

As a subprocess against the real Docker engine: it must exit 0, say whether this
engine gets its containers' departures one at a time (as the engine's own check
answers for this engine's version), print both rows with medians and ratios, and
leave nothing of its run behind. Nothing is compared: a diagnostic, not a timed test.
"""

from __future__ import annotations

import re

import pytest

from jupyter_cluster.engine.agents.docker.network_leave import deadlocks_on_leave
from tests.support.bench_runs import NOTHING, left_by, run_diagnostic
from tests.support.docker import docker

pytestmark = pytest.mark.docker


def test_the_teardown_diagnostic_runs_and_reports() -> None:
    result, run_id = run_diagnostic("teardown", "--sizes", "2", "--repeat", "1")
    version = docker("version", "--format", "{{.Server.Version}}").stdout.strip()
    said = f"Docker {version}: departures one at a time: {deadlocks_on_leave(version)}"
    assert said in result.stderr + result.stdout, str(result)
    for case in ("2 containers of one network removed at once", "2 containers removed one"):
        row = rf"^teardown +{case}.* +seconds +\d+(\.\d+)? m?s .* \d+\.\d\d"
        assert re.search(row, result.stdout, re.M), result.stdout
    assert left_by(run_id) == NOTHING
