"""The lock the engine processes of one store share for containers' departures from
a network (``jupyter_cluster.engine.agents.docker.file_lock``): held by another real
process it is waited for, given up after its wait, and never leaves its file behind.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from jupyter_cluster.engine.agents.docker.file_lock import held

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
