"""Docker's own create and start (``bench/bench_docker_start.py``) at sizes 1 and 2, once each.

As a subprocess against the real Docker engine: it must exit 0 (it launches a
session with the engine to copy a sub's making, and fails if anything of that is
left) and print, for each phase and kind, the medians and the slopes, every
container, network and volume it made removed. Nothing is compared: it is a
diagnostic, not a timed test.
"""

from __future__ import annotations

import re

import pytest

from tests.support.bench_runs import NOTHING, left_by, run_diagnostic

pytestmark = pytest.mark.docker


def test_the_docker_start_diagnostic_runs_and_reports() -> None:
    result, run_id = run_diagnostic("docker_start", "--sizes", "1,2", "--repeat", "1")
    for phase in ("start", "create\\+start"):
        for network in ("user", "session", "followed", "bridge", "none"):
            medians = rf"^{phase} +{network} +1: \d+\.\d{{3}} s  2: \d+\.\d{{3}} s$"
            assert re.search(medians, result.stdout, re.M), result.stdout
            slope = rf"^{phase} +{network} +slope -?\d+\.\d{{3}} s per container \([+-]\d"
            assert re.search(slope, result.stdout, re.M), result.stdout
    assert left_by(run_id) == NOTHING
