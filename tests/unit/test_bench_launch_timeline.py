"""The pure parts of ``bench/bench_launch_timeline.py``: milestones, their table, and
that observing the engine's launch clock and the floor leaves both as they were."""

from __future__ import annotations

from types import ModuleType

import pytest

from tests.support.bench_modules import load_bench_module
from tests.support.constants import REPO


@pytest.fixture
def timeline(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    monkeypatch.syspath_prepend(str(REPO / "bench"))  # its `common` imports
    return load_bench_module("bench_launch_timeline_under_test", "bench/bench_launch_timeline.py")


def test_each_milestone_gives_its_first_median_and_last_container(timeline: ModuleType) -> None:
    marks = timeline.Milestones()
    marks.seen = {"start": [0.5, 0.1, 0.3], "ssh_ready": [0.7]}
    assert marks.summary() == {"start": (0.1, 0.3, 0.5), "ssh_ready": (0.7, 0.7, 0.7)}
    marks.begin()
    assert marks.summary() == {}


def test_the_table_gives_each_sides_medians_and_a_dash_for_what_it_lacks(
    timeline: ModuleType,
) -> None:
    runs = {
        "ours": [
            {"create": (0.1, 0.2, 0.3), "start": (0.5, 1.0, 2.0), "done": (3.0, 3.0, 3.0)},
            {"create": (0.3, 0.4, 0.5), "start": (0.7, 1.2, 2.2), "done": (3.4, 3.4, 3.4)},
        ],
        "floor": [{"start": (1.0, 2.0, 2.5), "done": (3.5, 3.5, 3.5)}],
    }
    rows = {line.split()[0]: line.split()[1:] for line in timeline.table(runs)[1:]}
    assert rows["create"] == ["0.200", "0.300", "0.400", "-"]
    assert rows["start"] == ["0.600", "1.100", "2.100", "1.000", "2.000", "2.500"]
    assert rows["files"] == ["-", "-"]
    assert rows["done"] == ["3.200", "3.200", "3.200", "3.500", "3.500", "3.500"]


async def test_observing_tells_the_milestones_and_restores_what_it_wrapped(
    timeline: ModuleType,
) -> None:
    from jupyter_cluster.core.timings import LaunchClock

    floors = timeline.floors
    before = (LaunchClock.mark, floors.Floor.start, floors.sshd_answers)
    marks = timeline.Milestones()
    clock = LaunchClock("s", ["main1"])
    with timeline.observed(marks):
        clock.mark("main1", "create")
    assert before == (LaunchClock.mark, floors.Floor.start, floors.sshd_answers)
    assert set(marks.summary()) == {"create"}
    assert "create" in clock.timings  # the clock still did its own work
