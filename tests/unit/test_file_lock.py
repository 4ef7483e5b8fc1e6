"""The lock the engine processes of one store share for containers' departures from
a network (``jupyter_cluster.file_lock``): held by another real
process it is waited for, given up after its wait, and never leaves its file behind.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import pwd
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from jupyter_cluster.engine.ending import launch_lock_key, session_lock_key
from jupyter_cluster.file_lock import held

#: A process that locks ``argv[1]`` as the module does, says so, and holds it for
#: ``argv[2]`` seconds.
HOLDER = """
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)
fcntl.flock(fd, fcntl.LOCK_EX)
print("held", flush=True)
time.sleep(float(sys.argv[2]))
"""


@contextlib.contextmanager
def another_process_holding(directory: Path, seconds: float) -> Iterator[None]:
    """``directory``'s lock ``network-n1`` held by another process for ``seconds``
    (from when this is entered); that process ended on the way out."""
    directory.mkdir(mode=0o700)
    argv = [sys.executable, "-c", HOLDER, str(directory / "network-n1.lock"), str(seconds)]
    holder = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        yield
    finally:
        holder.kill()
        holder.wait(10)


async def test_a_lock_another_process_holds_is_waited_for(tmp_path: Path) -> None:
    locks = tmp_path / "locks"
    with another_process_holding(locks, 0.4):
        begin = time.monotonic()
        async with held(str(locks), "network-n1", wait=30) as had:
            waited = time.monotonic() - begin
            assert had
            assert (locks / "network-n1.lock").exists()
    assert 0.3 < waited < 10
    assert list(locks.iterdir()) == []


async def test_a_lock_held_past_its_wait_is_gone_on_without(tmp_path: Path) -> None:
    with another_process_holding(tmp_path / "locks", 5):
        begin = time.monotonic()
        async with held(str(tmp_path / "locks"), "network-n1", wait=0.3) as had:
            assert not had
        assert 0.3 <= time.monotonic() - begin < 3


async def test_turns_in_one_process_too_and_the_directory_is_made_private(
    tmp_path: Path,
) -> None:
    directory = tmp_path / "store" / "locks"
    inside = most = 0

    async def turn() -> None:
        nonlocal inside, most
        async with held(str(directory), "network-n1", wait=30) as had:
            assert had
            inside += 1
            most = max(most, inside)
            await asyncio.sleep(0.02)
            inside -= 1

    await asyncio.gather(*(turn() for _ in range(5)))
    assert most == 1
    assert stat.S_IMODE(os.stat(directory).st_mode) == 0o700
    assert list(directory.iterdir()) == []


@pytest.mark.parametrize("key", ["../escape", "a/b", ".hidden", ""])
async def test_a_key_that_is_not_a_plain_name_takes_no_lock(tmp_path: Path, key: str) -> None:
    async with held(str(tmp_path / "locks"), key, wait=1) as had:
        assert not had
    assert list(tmp_path.iterdir()) == []


async def test_no_directory_no_lock(tmp_path: Path) -> None:
    async with held("", "network-n1", wait=1) as had:
        assert not had


@pytest.mark.parametrize("kind", ["open to others", "a link"])
async def test_a_directory_not_this_users_alone_is_not_used(tmp_path: Path, kind: str) -> None:
    """Locks in a directory others can enter could be held by them for good: the
    caller goes on at once, without a lock, and writes nothing there."""
    target = tmp_path / "elsewhere"
    target.mkdir(mode=0o700)
    locks = tmp_path / "locks"
    if kind == "a link":
        locks.symlink_to(target)
    else:
        locks.mkdir()
        locks.chmod(0o777)
    begin = time.monotonic()
    async with held(str(locks), "network-n1", wait=5) as had:
        assert not had
    assert time.monotonic() - begin < 1
    assert list(target.iterdir()) == [] and list(locks.iterdir()) == []


#: Run as ``nobody``: in ``$1`` (a shared directory) make ``locks`` of its own and
#: hold the lock ``$3`` there for good; then try to make that lock in ``$2`` (ours).
SQUAT = """
import fcntl, os, sys, time
name = sys.argv[3] + ".lock"
os.mkdir(os.path.join(sys.argv[1], "locks"), 0o700)
fd = os.open(os.path.join(sys.argv[1], "locks", name), os.O_RDWR | os.O_CREAT, 0o600)
fcntl.flock(fd, fcntl.LOCK_EX)
try:
    os.open(os.path.join(sys.argv[2], name), os.O_RDWR | os.O_CREAT, 0o600)
    print("planted in ours", flush=True)
except PermissionError:
    print("held theirs; ours refused", flush=True)
time.sleep(600)
"""


@pytest.mark.parametrize(
    "key", ["network-n1", session_lock_key("s1"), launch_lock_key("s1")], ids=str
)
async def test_another_user_can_neither_hold_our_locks_nor_make_us_wait(key: str) -> None:
    """Another Unix user of this machine cannot make a lock file in the store's own
    locks directory; and where it made the directory first (a store configured in a
    shared folder), its held lock costs us no wait: not a network departure, not a
    removal of a session, not one waiting for a launch."""
    if os.geteuid() != 0:
        if os.environ.get("CI"):  # CI runs as root: never hide this test there
            pytest.fail("CI must run this test as root")
        pytest.skip("needs root, to run commands as another user")
    arena = Path(tempfile.mkdtemp(prefix="file-lock-test-", dir="/tmp"))
    arena.chmod(0o755)  # the way to ours is open to anyone; ours itself is not
    (arena / "cluster").mkdir(mode=0o755)
    ours = arena / "cluster" / "locks"
    async with held(str(ours), "network-n2", wait=1) as had:  # made as ClusterManager's is
        assert had
    shared = arena / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    nobody = pwd.getpwnam("nobody")
    ids = (f"--reuid={nobody.pw_uid}", f"--regid={nobody.pw_gid}", "--clear-groups")
    argv = ["setpriv", *ids, "--", sys.executable, "-c", SQUAT, str(shared), str(ours), key]
    squatter = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True, cwd="/")
    try:
        assert squatter.stdout is not None
        assert squatter.stdout.readline() == "held theirs; ours refused\n"
        assert (shared / "locks").stat().st_uid == nobody.pw_uid
        begin = time.monotonic()
        async with held(str(shared / "locks"), key, wait=5) as had:
            assert not had
        assert time.monotonic() - begin < 1
        assert list(ours.iterdir()) == []
    finally:
        squatter.kill()
        squatter.wait(10)
        shutil.rmtree(arena)
