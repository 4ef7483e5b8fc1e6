"""The file-delivery measurement (``bench/bench_file_delivery.py``) at size 2, one run each.

As a subprocess against the real Docker engine: it must exit 0 and print every
way's median and its ratio to ``archive``, every container, network and volume it
made removed. Nothing is
compared: it is a design measurement, not a timed test.
"""

from __future__ import annotations

import re

import pytest

from tests.support.bench_runs import NOTHING, left_by, run_diagnostic

pytestmark = pytest.mark.docker


def test_the_file_delivery_measurement_runs_and_reports() -> None:
    result, run_id = run_diagnostic("file_delivery", "--size", "2", "--repeat", "1")
    for way in ("archive", "bind", "volume"):
        assert re.search(rf"^{way} +median \d+\.\d+ s \(.* 1 runs\)$", result.stdout, re.M), (
            result.stdout
        )
    for way in ("bind", "volume"):
        ratio = rf"^{way}/archive \d+\.\d\d at size 2$"
        assert re.search(ratio, result.stdout, re.M), result.stdout
    assert left_by(run_id) == NOTHING
