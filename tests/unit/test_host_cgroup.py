"""Reading a container's CPU counter from this machine's cgroup files
(``engine.agents.docker.host_cgroup``), for each layout Docker uses, under a
made-up cgroup root."""

from __future__ import annotations

from pathlib import Path

import pytest

from jupyter_cluster.engine.agents.docker import host_cgroup

CID = "ab" * 32


def write(root: Path, place: str, name: str, text: str) -> None:
    folder = root / place
    folder.mkdir(parents=True)
    (folder / name).write_text(text)


@pytest.mark.parametrize(
    "place",
    [
        f"cpuacct/docker/{CID}",
        f"cpu,cpuacct/docker/{CID}",
        f"cpuacct/system.slice/docker-{CID}.scope",
    ],
)
def test_cgroup_v1_counts_nanoseconds(tmp_path: Path, place: str) -> None:
    write(tmp_path, place, "cpuacct.usage", "1500000000\n")
    assert host_cgroup.cpu_seconds(CID, str(tmp_path)) == pytest.approx(1.5)


@pytest.mark.parametrize("place", [f"docker/{CID}", f"system.slice/docker-{CID}.scope"])
def test_cgroup_v2_counts_microseconds(tmp_path: Path, place: str) -> None:
    write(tmp_path, place, "cpu.stat", "usage_usec 2500000\nuser_usec 2000000\n")
    assert host_cgroup.cpu_seconds(CID, str(tmp_path)) == pytest.approx(2.5)


def test_no_cgroup_or_no_full_id_is_none(tmp_path: Path) -> None:
    assert host_cgroup.cpu_seconds(CID, str(tmp_path)) is None
    write(tmp_path, f"cpuacct/docker/{CID}", "cpuacct.usage", "garbage\n")
    assert host_cgroup.cpu_seconds(CID, str(tmp_path)) is None
    # Only a full Docker id names a cgroup: never a path of the caller's choosing.
    write(tmp_path, "cpuacct/docker/x", "cpuacct.usage", "7\n")
    assert host_cgroup.cpu_seconds("x", str(tmp_path)) is None
    assert host_cgroup.cpu_seconds("../../etc", str(tmp_path)) is None
