"""The launch timeline (``bench/bench_launch_timeline.py``) at size 2, one run of each side.

As a subprocess against the real Docker engine: it must exit 0 (its floor's
containers removed, ours shut down) and print, for both sides, when their
containers were started and ready, in order, and when the launch ended. Nothing is
compared: it is a diagnostic, not a timed test.
"""

from __future__ import annotations

import pytest

from tests.support.bench_runs import NOTHING, left_by, run_diagnostic

pytestmark = pytest.mark.docker


def test_the_launch_timeline_runs_and_reports() -> None:
    result, run_id = run_diagnostic("launch_timeline", "--size", "2", "--repeat", "1")
    lines = result.stdout.splitlines()
    assert lines[0] == "Seconds from a size-2 launch's start, median of 1 runs each", result.stdout
    rows = {line.split()[0]: line.split()[1:] for line in lines[2:]}
    ours = {m: [float(x) for x in rows[m][:3]] for m in ("create", "files", "start", "ssh_ready")}
    floor = {m: [float(x) for x in rows[m][3:]] for m in ("start", "ssh_ready")}
    assert rows["create"][3:] == rows["files"][3:] == ["-"], result.stdout  # not the floor's
    for side in (ours, floor):
        assert all(first <= middle <= last for first, middle, last in side.values()), result.stdout
        assert 0 < side["start"][0] <= side["ssh_ready"][2], result.stdout
    done = [float(x) for x in rows["done"]]
    assert ours["create"][2] <= ours["start"][2] <= ours["ssh_ready"][2] <= done[0], result.stdout
    assert floor["ssh_ready"][2] <= done[3], result.stdout
    assert left_by(run_id) == NOTHING, "the floor's containers were left"
