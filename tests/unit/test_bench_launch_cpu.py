"""The pure parts of ``bench/bench_launch_cpu.py``: CPU per process name, and its table."""

from __future__ import annotations

from collections import Counter
from types import ModuleType

import pytest

from tests.support.bench_modules import load_bench_module
from tests.support.constants import REPO


@pytest.fixture
def launch_cpu(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    monkeypatch.syspath_prepend(str(REPO / "bench"))  # its `common` imports
    return load_bench_module("bench_launch_cpu_under_test", "bench/bench_launch_cpu.py")


def test_cpu_is_summed_per_name_new_processes_whole_reused_pids_afresh(
    launch_cpu: ModuleType,
) -> None:
    before = {1: ("dockerd", 10.0), 2: ("sh", 1.0), 3: ("kworker/u8:2", 5.0)}
    after = {
        1: ("dockerd", 10.5),  # went on running
        2: ("python3", 0.25),  # the pid was reused by another process
        3: ("kworker/u8:2", 9.0),  # a kernel thread: left out
        4: ("dockerd", 0.5),  # another one, new
        5: ("sshd", 0.03),
    }
    spent = launch_cpu.spent_by_name(before, after)
    assert spent == Counter({"dockerd": 1.0, "python3": 0.25, "sshd": 0.03})


def test_the_table_gives_medians_and_the_difference_biggest_first(
    launch_cpu: ModuleType,
) -> None:
    runs = {
        "ours": [Counter(dockerd=3.0, sshd=0.001), Counter(dockerd=3.4), Counter(dockerd=9.0)],
        "floor": [Counter(dockerd=3.0, sh=0.2), Counter(dockerd=3.1, sh=0.2), Counter(sh=0.1)],
    }
    header, *rows = launch_cpu.table(runs)
    assert header.split() == ["process", "ours", "floor", "ours-floor"]
    assert [r.split() for r in rows] == [
        ["dockerd", "3.400", "3.000", "+0.400"],
        ["sh", "0.000", "0.200", "-0.200"],
    ]  # sshd: under 0.01 s on both sides
