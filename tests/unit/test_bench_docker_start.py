"""The pure parts of ``bench/bench_docker_start.py``: a sleeper's body and the report."""

from __future__ import annotations

from types import ModuleType

import pytest

from tests.support.bench_modules import load_bench_module
from tests.support.constants import REPO


@pytest.fixture
def docker_start(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    monkeypatch.syspath_prepend(str(REPO / "bench"))  # its `common` imports
    return load_bench_module("bench_docker_start_under_test", "bench/bench_docker_start.py")


def test_a_sleeper_is_labelled_with_the_run_and_on_the_network_given(
    docker_start: ModuleType,
) -> None:
    body = docker_start.sleeper("img:1", "run7", "net-id")
    assert body["Image"] == "img:1"
    assert body["Entrypoint"][0] == "sleep"
    assert body["Labels"] == {"jupyter-cluster-bench.run-id": "run7"}
    assert body["HostConfig"] == {"NetworkMode": "net-id"}


def test_the_report_gives_medians_and_slopes_over_none(docker_start: ModuleType) -> None:
    # start: user costs 0.15 s a container, bridge 0.12, none 0.10 (plus 0.2 s fixed);
    # the odd runs (3 s) must not move the medians. create+start adds 0.01 a container.
    took = {}
    for network, per in (("user", 0.15), ("bridge", 0.12), ("none", 0.10)):
        for size in (1, 4, 16):
            start = 0.2 + per * size
            took[("start", network, size)] = [start, start, 3.0]
            took[("both", network, size)] = [start + 0.01 * size] * 2 + [3.0]
    lines = docker_start.report(took, [1, 4, 16])
    assert "start        user   1: 0.350 s  4: 0.800 s  16: 2.600 s" in lines
    assert "start        user   slope 0.150 s per container (+0.050 s over none)" in lines
    assert "start        bridge slope 0.120 s per container (+0.020 s over none)" in lines
    assert "start        none   slope 0.100 s per container (+0.000 s over none)" in lines
    assert "create+start user   slope 0.160 s per container (+0.050 s over none)" in lines
    assert len(lines) == 12


def test_one_size_reports_medians_without_slopes(docker_start: ModuleType) -> None:
    took = {(p, n, 2): [0.5] for p in ("start", "both") for n in ("user", "bridge", "none")}
    lines = docker_start.report(took, [2])
    assert len(lines) == 6 and not any("slope" in line for line in lines)
