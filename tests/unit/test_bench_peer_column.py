"""A benchmark row with a peer beside ours (``bench/common/harness.py``: ``beside``,
``print_table``, ``machine``), the way ``bench_gateway.py`` puts gateway_provisioners
beside ours and ``bench/run.py`` prints it. Pure: no Docker, no benchmark run."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from tests.support.bench_modules import load_bench_module

harness = load_bench_module("bench_harness_under_test", "bench/common/harness.py")


def _rows() -> list[dict]:
    start = harness.result("gateway", "start, ours", "seconds", [1.9, 2.0, 2.1], [1.4, 1.5])
    harness.beside(start, "gateway_provisioners", [1.6, 1.7, 1.8])
    down = harness.result("gateway", "shutdown, ours", "seconds", [0.02, 0.04], [0.2])
    harness.beside(down, "gateway_provisioners", [0.2, 0.3], goal=1.0)
    vs = harness.result(
        "gateway", "shutdown, ours vs theirs", "seconds", [0.02], [0.25], shown_as_peer=True
    )
    plain = harness.result("launch", "a: size 1", "seconds", [1.5], [1.0], goal=1.1)
    return [start, down, vs, plain]


def test_beside_puts_the_peers_median_and_ratio_in_the_row() -> None:
    start, down, vs, plain = _rows()
    peer = start["peer"]
    assert peer["name"] == "gateway_provisioners" and peer["median"] == 1.7
    assert peer["spread"] == [1.6, 1.8] and peer["samples"] == [1.6, 1.7, 1.8]
    assert math.isclose(peer["ratio"], 2.0 / 1.7)
    assert peer["goal"] is None and peer["met"] is None
    # The row's own figures are untouched: ratio is still ours/floor.
    assert start["ours_median"] == 2.0 and start["floor_median"] == 1.45
    assert math.isclose(start["ratio"], 2.0 / 1.45)
    assert math.isclose(down["peer"]["ratio"], 0.03 / 0.25) and down["peer"]["met"] is True
    assert plain["peer"] is None and plain["shown_as_peer"] is False
    assert vs["shown_as_peer"] is True


def test_a_peer_goal_follows_the_rows_direction() -> None:
    faster = harness.result("io", "rate", "throughput", [80.0], [100.0], higher_is_better=True)
    harness.beside(faster, "theirs", [100.0], goal=0.9)
    assert faster["peer"]["met"] is False  # 0.8 of theirs, at least 0.9 wanted
    empty = harness.beside(harness.result("x", "y", "seconds", [1.0], [1.0]), "t", [], goal=1)
    assert math.isnan(empty["peer"]["median"]) and empty["peer"]["met"] is None


def test_print_table_shows_the_peer_column_and_leaves_out_rows_shown_as_peer(
    capsys: pytest.CaptureFixture[str],
) -> None:
    harness.print_table(_rows())
    header, *lines, footnote = capsys.readouterr().out.splitlines()
    assert header.split()[:3] == ["bench", "case", "metric"]
    assert header.endswith("goal          beside ours (median, ours/it)")
    start, down, plain = lines  # "ours vs theirs" is left out
    assert start.startswith("gateway  start, ours ")
    assert start.endswith("1.38                 gateway_provisioners 1.7 s, ours/it 1.18x")
    assert down.startswith("gateway  shutdown, ours ")
    assert down.endswith("0.15                 gateway_provisioners 0.25 s, ours/it 0.12x ≤ 1 met")
    assert plain.startswith("launch ") and plain.endswith("1.50   ≤ 1.1 MISSED")
    assert footnote == "(1 row of ours against a peer left out: the peer column has them)"


def test_print_table_without_peers_keeps_its_columns(capsys: pytest.CaptureFixture[str]) -> None:
    harness.print_table([harness.result("launch", "a: size 1", "seconds", [1.5], [1.0])])
    header, row = capsys.readouterr().out.splitlines()
    assert header.split("  ")[0] == "bench" and "beside" not in header
    assert header.rstrip().endswith("goal") and row.split()[0] == "launch"


def test_machine_says_cpus_load_and_docker_when_docker_answers(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no docker CLI at all
    info = harness.machine()
    assert info["cpus"] >= 1 and len(info["load_average"]) == 3
    assert "docker" not in info and harness.docker_version() == {}
    fake = tmp_path / "docker"  # a docker CLI that answers `docker version --format ...`
    fake.write_text('#!/bin/sh\n[ "$1" = version ] && echo "20.10.24 1.41"\n')
    fake.chmod(0o755)
    info = harness.machine()
    assert (info["docker"], info["docker_api"]) == ("20.10.24", "1.41")
    fake.write_text("#!/bin/sh\necho 'Cannot connect to the Docker daemon' >&2; exit 1\n")
    assert "docker" not in harness.machine()
