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
    assert body["Entrypoint"] == ["sh", "-c", "echo up; exec sleep 600"]
    assert body["Labels"] == {"jupyter-cluster-bench.run-id": "run7"}
    assert body["HostConfig"] == {"NetworkMode": "net-id"}


def test_a_sleeper_made_as_a_sub_keeps_the_subs_host_config_on_its_own_network(
    docker_start: ModuleType,
) -> None:
    sub = {"Init": True, "CapDrop": ["ALL"], "NetworkMode": "jc-old"}
    body = docker_start.sleeper("img:1", "run7", "net-id", sub)
    assert body["HostConfig"] == {"Init": True, "CapDrop": ["ALL"], "NetworkMode": "net-id"}
    assert sub["NetworkMode"] == "jc-old"  # the sub's own, untouched


def test_a_subs_volume_mount_is_pointed_at_the_runs_volume(docker_start: ModuleType) -> None:
    sub = {
        "PidsLimit": 4096,
        "Mounts": [
            {"Type": "volume", "Source": "jc-x-files", "Target": "/opt/f", "ReadOnly": True},
            {"Type": "bind", "Source": "/data", "Target": "/home/work/data"},
        ],
    }
    made = docker_start.with_volume(sub, "bench-vol")
    assert made["PidsLimit"] == 4096
    assert made["Mounts"] == [
        {"Type": "volume", "Source": "bench-vol", "Target": "/opt/f", "ReadOnly": True},
        {"Type": "bind", "Source": "/data", "Target": "/home/work/data"},
    ]
    assert sub["Mounts"][0]["Source"] == "jc-x-files"


def test_the_report_gives_medians_and_slopes_over_none(docker_start: ModuleType) -> None:
    # start: user costs 0.15 s a container, session 0.155, followed 0.157, bridge 0.12,
    # none 0.10 (plus 0.2 s fixed); the odd runs (3 s) must not move the medians.
    # create+start adds 0.01 a container.
    took = {}
    kinds = (("user", 0.15), ("session", 0.155), ("followed", 0.157), ("bridge", 0.12))
    for network, per in (*kinds, ("none", 0.10)):
        for size in (1, 4, 16):
            start = 0.2 + per * size
            took[("start", network, size)] = [start, start, 3.0]
            took[("both", network, size)] = [start + 0.01 * size] * 2 + [3.0]
    lines = docker_start.report(took, [1, 4, 16])
    assert "start        user     1: 0.350 s  4: 0.800 s  16: 2.600 s" in lines
    assert "start        user     slope 0.150 s per container (+0.050 s over none)" in lines
    assert (
        "start        session  slope 0.155 s per container (+0.055 s over none, +0.005 s over user)"
        in lines
    )
    assert (
        "start        followed slope 0.157 s per container (+0.057 s over none, +0.002 s over "
        "session)" in lines
    )
    assert "start        bridge   slope 0.120 s per container (+0.020 s over none)" in lines
    assert "start        none     slope 0.100 s per container (+0.000 s over none)" in lines
    assert "create+start user     slope 0.160 s per container (+0.050 s over none)" in lines
    assert len(lines) == 20


def test_one_size_reports_medians_without_slopes(docker_start: ModuleType) -> None:
    kinds = ("user", "session", "followed", "bridge", "none")
    took = {(p, n, 2): [0.5] for p in ("start", "both") for n in kinds}
    lines = docker_start.report(took, [2])
    assert len(lines) == 10 and not any("slope" in line for line in lines)
