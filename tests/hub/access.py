"""Letting the hub tests' Unix users reach this checkout's Python environment.

The single-user servers (and :meth:`.support.Hub.run_as`) run as ``alice``, ``bob``
and ``clusteradmin`` from this checkout's ``.venv``, which needs every directory above the
venv, above the checkout (the editable install imports from it) and above the Python
the venv was made from to be traversable by other users. It is not when that Python
lives under a private home: on this project's machines ``.venv`` is made from a
pyenv Python under ``/root`` (mode 0700).

:class:`TraversalGrant` adds ``o+x`` (traverse, not list) to each such directory for
as long as a hub test session runs, and puts the old mode back when the last
concurrent session ends: the original modes and a shared lock live in
:data:`STATE_DIR` (root's own), so one session's end cannot pull the ground from
under another's servers. Each running session holds :data:`LOCK` shared; changes
of modes happen under :data:`MUTEX`, so a session starting never waits for others
to end. Nothing else (the checkout's own files included) is changed.
"""

from __future__ import annotations

import fcntl
import json
import stat
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import IO

from tests.support.constants import REPO

#: Root's own place for the original modes and the lock shared by concurrent sessions.
STATE_DIR = Path("/run/jupyter-cluster-tests")
MODES = STATE_DIR / "hub-traversal.json"
LOCK = STATE_DIR / "hub-traversal.lock"
MUTEX = STATE_DIR / "hub-traversal.mutex"


def python_paths() -> list[Path]:
    """What a user's server must reach: the venv, the checkout, the base Python."""
    paths = [Path(sys.prefix), REPO, Path(sys.base_prefix), Path(sys.executable).parent]
    return paths + [p.resolve() for p in paths]


def untraversable(targets: Iterable[Path]) -> list[Path]:
    """The directories among ``targets`` and their ancestors lacking ``o+x``."""
    found: list[Path] = []
    for target in targets:
        for directory in (target, *target.parents):
            if (
                directory.is_dir()
                and not directory.stat().st_mode & stat.S_IXOTH
                and directory not in found
            ):
                found.append(directory)
    return found


class TraversalGrant:
    """``o+x`` on the directories in the way of :func:`python_paths`, shared between
    concurrent test sessions (see the module docstring)."""

    def __init__(self, targets: Iterable[Path] | None = None) -> None:
        self.targets = list(targets if targets is not None else python_paths())
        self._lock: IO[str] | None = None
        #: The directories this session made traversable.
        self.changed: list[str] = []

    def acquire(self) -> list[str]:
        """Make the directories traversable (recording their modes); returns those changed."""
        STATE_DIR.mkdir(mode=0o700, parents=True, exist_ok=True)
        with open(MUTEX, "a") as mutex:
            fcntl.flock(mutex, fcntl.LOCK_EX)  # one session changes modes at a time
            # Every running session holds the lock shared; the last one out restores.
            self._lock = open(LOCK, "a")  # noqa: SIM115  (held until release)
            fcntl.flock(self._lock, fcntl.LOCK_SH)
            modes: dict[str, int] = json.loads(MODES.read_text()) if MODES.exists() else {}
            for directory in untraversable(self.targets):
                mode = stat.S_IMODE(directory.stat().st_mode)
                modes.setdefault(str(directory), mode)
                directory.chmod(mode | stat.S_IXOTH)
                self.changed.append(str(directory))
            MODES.write_text(json.dumps(modes))
        return self.changed

    def release(self) -> None:
        """Put the recorded modes back unless another session still holds the lock."""
        if self._lock is None:
            return
        lock, self._lock = self._lock, None
        with open(MUTEX, "a") as mutex:
            fcntl.flock(mutex, fcntl.LOCK_EX)  # no session starts meanwhile
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:  # another hub test session still runs
                lock.close()
                return
            self._restore(lock)

    @staticmethod
    def _restore(lock: IO[str]) -> None:
        try:
            modes: dict[str, int] = json.loads(MODES.read_text()) if MODES.exists() else {}
            for name, mode in modes.items():
                directory = Path(name)
                # Only what still is as we left it (someone may have changed it since).
                if (
                    directory.is_dir()
                    and stat.S_IMODE(directory.stat().st_mode) == mode | stat.S_IXOTH
                ):
                    directory.chmod(mode)
            MODES.unlink(missing_ok=True)
        finally:
            lock.close()
