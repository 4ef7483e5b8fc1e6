"""The file-delivery measurement (``bench/bench_file_delivery.py``) at size 2, one run each.

As a subprocess against the real Docker engine: it must exit 0 and print every
way's median and its ratio to ``archive``, every container, network and volume it
made removed. Nothing is
compared: it is a design measurement, not a timed test.
"""

from __future__ import annotations

import re
import sys
import uuid

import pytest

from tests.support.constants import REPO
from tests.support.docker import docker
from tests.support.processes import run

pytestmark = pytest.mark.docker

LABEL = "label=jupyter-cluster-bench.run-id"


def test_the_file_delivery_measurement_runs_and_reports() -> None:
    script = REPO / "bench" / "bench_file_delivery.py"
    run_id = uuid.uuid4().hex[:12]  # what this run left, not another benchmark's
    argv = (sys.executable, str(script), "--size", "2", "--repeat", "1", "--run-id", run_id)
    result = run(argv, timeout=180)
    assert result.returncode == 0, str(result)
    for way in ("archive", "bind", "volume"):
        assert re.search(rf"^{way} +median \d+\.\d+ s \(.* 1 runs\)$", result.stdout, re.M), (
            result.stdout
        )
    for way in ("bind", "volume"):
        ratio = rf"^{way}/archive \d+\.\d\d at size 2$"
        assert re.search(ratio, result.stdout, re.M), result.stdout
    assert docker("ps", "-aq", "--filter", f"{LABEL}={run_id}").stdout.split() == []
    assert docker("network", "ls", "-q", "--filter", f"{LABEL}={run_id}").stdout.split() == []
    assert docker("volume", "ls", "-q", "--filter", f"{LABEL}={run_id}").stdout.split() == []
