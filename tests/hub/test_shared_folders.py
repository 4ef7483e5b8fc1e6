"""A shared folder in team mode, attacked from another user's session.

The admin shares ``datasets`` as the README's team section says
(``c.ClusterManager.shared_folders`` in the service's config, its files in
``data_root/.shared/datasets``) and mounts a file system below it on the host, as one
would an NFS dataset. bob, as his Unix user, with the CLI through the service, mounts
the folder (read-write, as he asks) in his session: he reads both, and can write to
neither. Docker 20.10 would leave the file system below writable: the engine mounts
it read-only too (``engine/folder_submounts.py``).
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.constants import SMALL_FLAGS
from tests.support.mounts import read_then_try_writes, tmpfs_at

from .launch import service_store
from .support import Hub, end_sessions

CLI = "jupyter-cluster"
#: Run as work in bob's main1: read the folder and what is below it, try to write both.
TRY = read_then_try_writes("datasets", "nfs", "readme.txt", "nfs/data.txt")


@pytest.fixture
def datasets(hub: Hub) -> Iterator[Path]:
    """The shared folder, with a tmpfs writable by all mounted at ``nfs`` below it."""
    folder = service_store(hub.state) / "folders" / ".shared" / "datasets"
    folder.mkdir(parents=True)
    (folder / "readme.txt").write_text("shared by the admin\n")
    try:
        with tmpfs_at(folder / "nfs", "data.txt", "on the file system below\n"):
            yield folder
    finally:
        shutil.rmtree(folder)


def test_bob_reads_a_shared_folder_and_what_is_below_it_but_writes_neither(
    hub: Hub, team: dict[str, str], datasets: Path
) -> None:
    argv = [CLI, "launch", *SMALL_FLAGS, "--mount", "datasets:rw", "--json"]
    done = hub.run_as("bob", argv)
    try:
        assert done.returncode == 0, done.stderr
        sid = json.loads(done.stdout)["id"]
        tried = hub.run_as("bob", [CLI, "exec", sid, "main1", "--", "sh", "-c", TRY])
        assert tried.returncode == 0, tried.stderr
        assert tried.stdout == (
            "shared by the admin\non the file system below\nbelow: refused\ntop: refused\n"
        ), tried
    finally:
        end_sessions(hub, "bob", team["bob"])
    assert sorted(os.listdir(datasets)) == ["nfs", "readme.txt"]
    assert sorted(os.listdir(datasets / "nfs")) == ["data.txt"]
