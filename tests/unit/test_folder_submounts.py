"""A read-only data folder's mounts: the folder without what is mounted below it, and
each mount point below it that this machine's mount table shows bound read-only on
top (pure: the table is given; reading it is tested here too)."""

from __future__ import annotations

import os
from pathlib import Path

from jupyter_cluster.engine.agents.base import BindMount
from jupyter_cluster.engine.folder_submounts import read_mount_table, read_only_throughout


def table(tmp_path: Path, *below: str, read_only: str = "") -> str:
    lines = [f"40 22 0:35 / {tmp_path}/ref/{b} rw - tmpfs tmpfs rw" for b in below]
    if read_only:
        lines.append(f"50 22 0:36 / {tmp_path}/ref/{read_only} ro - tmpfs tmpfs ro")
    return "\n".join(lines)


def test_a_read_only_folder_gets_what_is_mounted_below_it_read_only(tmp_path: Path) -> None:
    ref = BindMount("/agent/root/ref", "/home/work/ref", readonly=True)
    mounted = read_only_throughout(
        [ref], [tmp_path / "ref"], table(tmp_path, "nfs", "nfs/deep", read_only="frozen")
    )
    assert mounted == (
        BindMount("/agent/root/ref", "/home/work/ref", readonly=True, recursive=False),
        BindMount("/agent/root/ref/frozen", "/home/work/ref/frozen", True, recursive=False),
        BindMount("/agent/root/ref/nfs", "/home/work/ref/nfs", True, recursive=False),
        BindMount("/agent/root/ref/nfs/deep", "/home/work/ref/nfs/deep", True, recursive=False),
    )


def test_a_read_only_folder_nothing_is_mounted_below_is_bound_alone(tmp_path: Path) -> None:
    ref = BindMount("/agent/root/ref", "/home/work/ref", readonly=True)
    assert read_only_throughout([ref], [tmp_path / "ref"], table(tmp_path)) == (
        BindMount("/agent/root/ref", "/home/work/ref", readonly=True, recursive=False),
    )


def test_a_writable_folder_and_a_volume_are_left_as_they_are(tmp_path: Path) -> None:
    own = BindMount("/agent/root/ref", "/home/work/ref")
    volume = BindMount("vol", "/opt/files", readonly=True, volume=True)
    mounts = [own, volume]
    assert read_only_throughout(mounts, [tmp_path / "ref"] * 2, table(tmp_path, "nfs")) == (
        own,
        volume,
    )


def test_the_folder_is_found_by_its_real_path(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "ref").symlink_to(tmp_path / "real")
    ref = BindMount("/agent/root/ref", "/home/work/ref", readonly=True)
    text = f"40 22 0:35 / {os.path.realpath(tmp_path)}/real/nfs rw - tmpfs tmpfs rw"
    assert read_only_throughout([ref], [tmp_path / "ref"], text)[1:] == (
        BindMount("/agent/root/ref/nfs", "/home/work/ref/nfs", readonly=True, recursive=False),
    )


def test_the_mount_table_is_read_or_is_empty(tmp_path: Path) -> None:
    assert " / / " in read_mount_table()  # this machine's root file system
    assert read_mount_table(str(tmp_path / "missing")) == ""
