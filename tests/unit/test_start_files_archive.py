"""The tar archive of a container's start-up files (``docker/archive.py``): every
entry whole, owners and modes kept, and no PAX header where plain tar suffices.

Docker extracts the archive into each new container on the launch's way to ready,
so its size counts once per container: a float mtime once gave every member a PAX
header of its own, doubling the archive.
"""

from __future__ import annotations

import io
import tarfile

from jupyter_cluster.engine.agents.base import FileEntry
from jupyter_cluster.engine.agents.docker.archive import files_tar

BLOCK = 512


def test_plain_entries_need_no_pax_headers_and_keep_owner_and_mode() -> None:
    files = [FileEntry(f"/opt/run/f{i}", b"x" * 100, 0o600, uid=1000, gid=1000) for i in range(8)]
    data = files_tar(files)
    # A header and one data block per file, then tar's two closing blocks, padded to
    # tarfile's 10 KiB record: no extra header block per member.
    assert len(data) == max(10240, (8 * 2 + 2) * BLOCK)
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        members = tar.getmembers()
    assert [m.name for m in members] == [f"opt/run/f{i}" for i in range(8)]
    assert all(m.pax_headers == {} for m in members)
    assert {(m.mode, m.uid, m.gid, m.size) for m in members} == {(0o600, 1000, 1000, 100)}


def test_a_uid_too_large_for_plain_tar_is_kept_exactly() -> None:
    data = files_tar(
        [FileEntry("/home/work/key", b"k", 0o600, uid=3_000_000_000, gid=3_000_000_000)]
    )
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        (member,) = tar.getmembers()
    assert (member.uid, member.gid) == (3_000_000_000, 3_000_000_000)


def test_a_link_entry_is_a_symbolic_link_owned_as_given() -> None:
    link = FileEntry("/home/work/.ssh/environment", b"", 0o777, 1000, 1000, link="/opt/x/env")
    with tarfile.open(fileobj=io.BytesIO(files_tar([link]))) as tar:
        (member,) = tar.getmembers()
    assert member.issym() and member.linkname == "/opt/x/env"
    assert (member.name, member.uid, member.gid, member.size) == (
        "home/work/.ssh/environment",
        1000,
        1000,
        0,
    )
