"""Private (0700) temporary directories that a killed process does not leave behind.

A kernel tunnel's sockets (:mod:`jupyter_cluster.reach.ports`), the app proxy's
sockets (:mod:`jupyter_cluster.reach.apps`) and ``jupyter cluster ssh``'s key files
(:mod:`jupyter_cluster.cli.ssh_commands`) live in directories of the machine's
temporary directory. A process that is killed, or crashes, never removes its own.
(The base image's root file system, :mod:`jupyter_cluster.images.build`, is not one
of them: a killed build can leave file systems mounted inside it, which no sweep
should remove unattended; it has no mark, so the sweep leaves it.) So every such
directory has a mark file that each process using the directory keeps locked
(shared) for as long as it does, and making a new directory first removes this
user's earlier ones whose mark nobody holds: the system drops a dead process's
locks, so a directory left unheld is one whose users all ended, whatever became of
their process ids since.

A directory is removed only when it is this user's, private, and holds the mark;
it is first renamed while its mark is locked exclusively, so a process that takes
it up again at that moment (a server re-attaching a kernel reuses its sockets'
directory) sees that it moved and makes it again (:func:`hold`).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import secrets
import shutil
import stat
import tempfile

#: How the directories' names start (in the temporary directory).
PREFIX = "jupyter-cluster-"
#: The mark file every user of a directory keeps locked (shared).
MARK = ".held"


class PrivateDir:
    """A private directory this process uses: :attr:`path`, held until
    :meth:`release` or :meth:`remove`."""

    def __init__(self, path: str, fd: int) -> None:
        self.path = path
        self._fd: int | None = fd

    @property
    def held(self) -> bool:
        """Whether this process still holds the directory through this object."""
        return self._fd is not None

    def release(self) -> None:
        """Stop holding the directory, leaving it in place (another holder, such as
        a restarted kernel's tunnel, goes on with it). A second call does nothing."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def remove(self) -> None:
        """Remove the directory with what is in it, then stop holding it."""
        shutil.rmtree(self.path, ignore_errors=True)
        self.release()


def make(kind: str = "") -> PrivateDir:
    """A new private directory named ``jupyter-cluster-<kind>…``, held; this user's
    abandoned ones are removed first (:func:`sweep`)."""
    sweep()
    for _ in range(5):  # another process's sweep can take a directory before it is held
        made = hold(tempfile.mkdtemp(prefix=f"{PREFIX}{kind}"))  # 0700
        if made is not None:
            return made
    raise OSError(f"cannot make a private directory in {tempfile.gettempdir()}")


def hold(path: str) -> PrivateDir | None:
    """``path`` (made if missing), held, if it is a directory only this user can enter;
    else ``None``. For a directory taken up again, as a re-attaching kernel's tunnel
    takes up its sockets' one."""
    for _ in range(3):  # a sweep that moved the directory away: make it again
        with contextlib.suppress(FileExistsError):
            os.mkdir(path, 0o700)
        mark = _open_mark(path, create=True)
        if mark is None:
            return None
        fcntl.flock(mark, fcntl.LOCK_SH)
        if same_file(mark, os.path.join(path, MARK)):
            return PrivateDir(path, mark)
        os.close(mark)
    return None


def sweep(root: str | None = None) -> list[str]:
    """Remove this user's directories in ``root`` (the temporary directory) that
    nobody holds; the paths removed. Called by :func:`make`."""
    root = root or tempfile.gettempdir()
    removed: list[str] = []
    try:
        entries = [e for e in os.scandir(root) if e.name.startswith(PREFIX)]
    except OSError:
        return removed
    for entry in entries:
        with contextlib.suppress(OSError):
            if _remove_if_abandoned(entry.path):
                removed.append(entry.path)
    return removed


def _remove_if_abandoned(path: str) -> bool:
    mark = _open_mark(path, create=False)
    if mark is None:
        return False  # not one of ours, or one being made
    try:
        try:
            fcntl.flock(mark, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False  # a live process holds it
        if not same_file(mark, os.path.join(path, MARK)):
            return False  # another sweep moved it meanwhile
        doomed = os.path.join(os.path.dirname(path), f"{PREFIX}swept-{secrets.token_hex(8)}")
        os.rename(path, doomed)
        shutil.rmtree(doomed, ignore_errors=True)
        return True
    finally:
        os.close(mark)


def _open_mark(path: str, *, create: bool) -> int | None:
    """The mark of ``path`` opened (made if ``create``), if ``path`` is a directory,
    not a link, only this user can enter; else ``None``."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
        if not private(os.fstat(fd)):
            return None
        flags = os.O_RDONLY | os.O_NOFOLLOW | (os.O_CREAT if create else 0)
        return os.open(MARK, flags, 0o600, dir_fd=fd)
    except OSError:
        return None
    finally:
        os.close(fd)


def private(info: os.stat_result) -> bool:
    """Whether ``info`` (of a path not followed) is a directory of this user's that
    nobody else can enter: here, and for :mod:`.file_lock`."""
    return (
        stat.S_ISDIR(info.st_mode)
        and info.st_uid == os.getuid()
        and stat.S_IMODE(info.st_mode) & 0o077 == 0
    )


def same_file(fd: int, path: str) -> bool:
    """Whether ``path`` (not followed) is still the file open as ``fd``: here, and
    for the lock files of :mod:`.file_lock`."""
    try:
        there = os.stat(path, follow_symlinks=False)
    except OSError:
        return False
    here = os.fstat(fd)
    return (here.st_dev, here.st_ino) == (there.st_dev, there.st_ino)
