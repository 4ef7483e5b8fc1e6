"""jupyter_cluster.whole_files.replaced_whole: a file appears whole or not at all,
private (0600) unless asked, and nothing is left beside it when writing fails."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from jupyter_cluster.whole_files import replaced_whole


def mode_of(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_private_file_replaces_the_old_one_whole(tmp_path: Path) -> None:
    target = tmp_path / "config"
    target.write_text("old")
    with replaced_whole(target) as f:
        f.write("new")
        assert target.read_text() == "old"  # the old file until the block ends
    assert target.read_text() == "new"
    assert mode_of(target) == 0o600
    assert os.listdir(tmp_path) == ["config"]


def test_a_shared_file_gets_the_mode_the_umask_gives(tmp_path: Path) -> None:
    old = os.umask(0o027)
    try:
        with replaced_whole(tmp_path / "download.bin", "wb", private=False) as f:
            f.write(b"\x00\x01")
    finally:
        os.umask(old)
    assert mode_of(tmp_path / "download.bin") == 0o640
    assert (tmp_path / "download.bin").read_bytes() == b"\x00\x01"


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "log.txt"
    target.write_text("kept")
    with pytest.raises(RuntimeError), replaced_whole(target) as f:
        f.write("half")
        raise RuntimeError("the reader broke")
    assert target.read_text() == "kept"
    assert os.listdir(tmp_path) == ["log.txt"]
