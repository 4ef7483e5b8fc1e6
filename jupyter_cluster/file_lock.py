"""An exclusive lock shared by every engine process of one store: a file locked with
flock(2) in a private directory beside the store.

The Docker agent's :mod:`~.engine.agents.docker.network_leave` takes it around each
departure from a network, so that two processes removing containers of one session
at once (a ``jupyter cluster rm`` while the server ends the same session) also take
them off its network one at a time between them; the engine's
:class:`~.engine.ending.SessionTerminator` takes one per session around a removal,
so that a second removal of the same session (a second ``rm``) waits for the first
and finds it ended; and a launch holds one while it brings its session up, which a
removal of the session waits for, so that it returns with nothing left. The file
is removed by its holder as it lets go; a process that locked the file just as it
was removed sees that the path names another file now, and tries again.

Best effort by design: callers use it to make something unlikely, never for
correctness, so a lock that another process holds longer than ``wait`` seconds, or
a directory that cannot be used (not a directory of this user's alone: a link, one
others can enter), lets the caller go on without it.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import logging
import os
import re
import time
from collections.abc import AsyncIterator

from .private_dirs import private, same_file

log = logging.getLogger(__name__)

#: Keys that are plain file names (Docker's ids and names are).
_SAFE_KEY = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")
#: How often a lock another process holds is tried again (seconds).
POLL = 0.005


@contextlib.asynccontextmanager
async def held(directory: str, key: str, wait: float) -> AsyncIterator[bool]:
    """Hold the lock named ``key`` in ``directory`` (made, private, if missing) for
    the block; yields whether it was had (see the module docstring for when not).
    ``directory`` empty: no lock at all."""
    fd = await _acquire(directory, key, wait) if directory else None
    try:
        yield fd is not None
    finally:
        if fd is not None:
            _release(_path(directory, key), fd)


def _path(directory: str, key: str) -> str:
    return os.path.join(directory, f"{key}.lock")


async def _acquire(directory: str, key: str, wait: float) -> int | None:
    """A descriptor of the locked file, or None when it cannot be had in time."""
    if not _SAFE_KEY.fullmatch(key):
        return None
    path = _path(directory, key)
    deadline = time.monotonic() + wait
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
        if not private(os.lstat(directory)):  # another user could hold its locks for good
            raise PermissionError("not a directory of this user's that only it can enter")
    except OSError as exc:
        log.warning("going on without the lock %s: %s", path, exc)
        return None
    while True:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
        except OSError as exc:
            log.warning("going on without the lock %s: %s", path, exc)
            return None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            if time.monotonic() >= deadline:
                log.warning("going on without the lock %s: held for over %.0f s", path, wait)
                return None
            await asyncio.sleep(POLL)
            continue
        except OSError as exc:  # a file system without flock (ENOLCK)
            os.close(fd)
            log.warning("going on without the lock %s: %s", path, exc)
            return None
        if same_file(fd, path):
            return fd
        os.close(fd)  # its holder removed it as we locked it: lock the path's file


def _release(path: str, fd: int) -> None:
    """Remove the file, then let go of it (a waiter then sees it removed)."""
    try:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
    finally:
        os.close(fd)
