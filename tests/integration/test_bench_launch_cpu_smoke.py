"""The launch CPU breakdown (``bench/bench_launch_cpu.py``) at size 2, one run of each side.

As a subprocess against the real Docker engine: it must exit 0 (its floor's
containers removed, ours shut down) and print a table in which the Docker daemon
and the container shim spent CPU on both sides, the machine was busy, and the
containers' own cgroups were read (main1's and the other's). Nothing is compared:
it is a diagnostic, not a timed test.
"""

from __future__ import annotations

import pytest

from tests.support.bench_runs import NOTHING, left_by, run_diagnostic

pytestmark = pytest.mark.docker


def test_the_launch_cpu_breakdown_runs_and_reports() -> None:
    result, run_id = run_diagnostic("launch_cpu", "--size", "2", "--repeat", "1")
    lines = result.stdout.splitlines()
    assert lines[0] == "CPU seconds of a size-2 launch, median of 1 runs each", result.stdout
    rows = {line.split()[0]: line.split()[1:] for line in lines[2:]}
    # The containers' own cgroups: main1 (the kernel) and the other one, both sides.
    for name in ("(machine,", "dockerd", "containerd-shim", "(containers)", "(busiest", "(each"):
        ours, floor, _ = (float(x) for x in rows[name][-3:])
        assert ours > 0 and floor > 0, (name, result.stdout)
    assert left_by(run_id) == NOTHING, "the floor's containers were left"
