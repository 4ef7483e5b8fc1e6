"""The lock the engine processes of one store share for containers' departures from
a network (``jupyter_cluster.engine.agents.docker.file_lock``): held by another real
process it is waited for, given up after its wait, and never leaves its file behind.
"""

from __future__ import annotations

import asyncio
import os
import stat
import subprocess
import sys
import time
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


def _hold_in_another_process(path: Path, seconds: float) -> subprocess.Popen[str]:
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(path), str(seconds)], stdout=subprocess.PIPE, text=True
    )
    assert holder.stdout is not None and holder.stdout.readline() == "held\n"
    return holder


async def test_a_lock_another_process_holds_is_waited_for(tmp_path: Path) -> None:
    tmp_path.joinpath("locks").mkdir(mode=0o700)
    holder = _hold_in_another_process(tmp_path / "locks" / "network-n1.lock", 0.4)
    begin = time.monotonic()
    try:
        async with held(str(tmp_path / "locks"), "network-n1", wait=30) as had:
            waited = time.monotonic() - begin
            assert had
            assert (tmp_path / "locks" / "network-n1.lock").exists()
    finally:
        holder.wait(10)
    assert 0.3 < waited < 10
    assert list((tmp_path / "locks").iterdir()) == []


async def test_a_lock_held_past_its_wait_is_gone_on_without(tmp_path: Path) -> None:
    tmp_path.joinpath("locks").mkdir(mode=0o700)
    holder = _hold_in_another_process(tmp_path / "locks" / "network-n1.lock", 5)
    begin = time.monotonic()
    try:
        async with held(str(tmp_path / "locks"), "network-n1", wait=0.3) as had:
            assert not had
        assert 0.3 <= time.monotonic() - begin < 3
    finally:
        holder.kill()
        holder.wait(10)


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
