"""A file system mounted below a read-only data folder is read-only in the containers
too (real Docker, through the CLI; root, to mount one).

Docker before 25 (this machine has 20.10) makes a read-only bind read-only at its top
only; the engine mounts the folder without what is below it, then what its mount
table shows below it on top, read-only. A writable folder keeps what is below it
writable. (What only an agent's host has mounted: tests/multihost.)
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.constants import SMALL_FLAGS
from tests.support.mounts import read_then_try_writes, tmpfs_at

from .support import Workspace

pytestmark = pytest.mark.docker

#: Run as work in a container: read the file below, try to write below and at the top.
TRY = read_then_try_writes("ref", "scratch", "scratch/inside.txt")


@pytest.fixture
def scratch(ws: Workspace) -> Iterator[Path]:
    """Data folder ``ref`` with a tmpfs writable by all mounted at ``ref/scratch``."""
    if os.getuid() != 0:
        if os.environ.get("CI"):  # CI runs as root: never hide this test there
            pytest.fail("CI must run this test as root")
        pytest.skip("needs root, to mount a file system")
    ws.ok_cli("folder", "create", "ref")
    with tmpfs_at(ws.folders_root / "ref" / "scratch", "inside.txt", "on the tmpfs\n") as below:
        yield below


def test_what_is_mounted_below_a_read_only_folder_is_read_only_in_every_container(
    ws: Workspace, scratch: Path
) -> None:
    sid = ws.launch("--size", "2", *SMALL_FLAGS, "--mount", "ref:ro")["id"]
    try:
        for host in ("main1", "sub1"):
            said = ws.sh(sid, host, TRY)
            assert said == "on the tmpfs\nbelow: refused\ntop: refused\n", (host, said)
    finally:
        ws.ok_cli("rm", sid)
    assert sorted(p.name for p in scratch.iterdir()) == ["inside.txt"]


def test_what_is_mounted_below_a_writable_folder_stays_writable(
    ws: Workspace, scratch: Path
) -> None:
    sid = ws.launch("--size", "1", *SMALL_FLAGS, "--mount", "ref")["id"]
    try:
        assert ws.sh(sid, "main1", TRY) == "on the tmpfs\nbelow: written\ntop: written\n"
    finally:
        ws.ok_cli("rm", sid)
    assert sorted(p.name for p in scratch.iterdir()) == ["inside.txt", "new"]
