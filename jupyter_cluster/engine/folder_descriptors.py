"""Descriptor-level pieces of :class:`~.folder_files.FolderFiles`: an upload being
written (:class:`Upload`), removing a tree and telling a link by descriptor, never
following a link, and reading an open file in chunks.

Only :mod:`.folder_files` (and :mod:`.folder_file_ops`, which hands uploads to the
front ends) use these; the rules they keep are that module's.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator

#: How a directory on the way to a path is opened: never through a link.
DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class Upload:
    """One file being written: :meth:`write` chunks, then :meth:`commit` or :meth:`abort`."""

    def __init__(self, dir_fd: int, fd: int, temp: str, name: str) -> None:
        self.dir_fd = dir_fd
        self.fd = fd
        self.temp = temp
        self.name = name
        self.size = 0

    def write(self, data: bytes) -> None:
        """Append ``data`` to the temporary file."""
        view = memoryview(data)
        while view:
            n = os.write(self.fd, view)
            view = view[n:]
        self.size += len(data)

    def commit(self) -> int:
        """Put the complete file in place (atomically); returns its size."""
        try:
            os.fsync(self.fd)
            os.close(self.fd)
            self.fd = -1
            os.rename(self.temp, self.name, src_dir_fd=self.dir_fd, dst_dir_fd=self.dir_fd)
        except BaseException:
            self.abort()
            raise
        os.close(self.dir_fd)
        self.dir_fd = -1
        return self.size

    def abort(self) -> None:
        """Drop the temporary file (an upload cut short); safe to call twice."""
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
        if self.dir_fd >= 0:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.temp, dir_fd=self.dir_fd)
            os.close(self.dir_fd)
            self.dir_fd = -1


def remove_tree(name: str, parent_fd: int) -> None:
    """Delete directory ``name`` of ``parent_fd`` and all in it, by descriptor, never
    following a link (shutil.rmtree takes ``dir_fd`` only from Python 3.11)."""
    fd = os.open(name, DIR_FLAGS, dir_fd=parent_fd)
    try:
        for entry in os.listdir(fd):
            mode = os.stat(entry, dir_fd=fd, follow_symlinks=False).st_mode
            if stat.S_ISDIR(mode):
                remove_tree(entry, fd)
            else:
                os.unlink(entry, dir_fd=fd)
    finally:
        os.close(fd)
    os.rmdir(name, dir_fd=parent_fd)


def is_link(name: str, dir_fd: int) -> bool:
    """Whether ``name`` in ``dir_fd`` is a symbolic link (False if it is not there)."""
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except OSError:
        return False


def chunks(fd: int, size: int) -> Iterator[bytes]:
    """The contents of open file ``fd`` in pieces of ``size`` bytes; closes it at the end."""
    try:
        while data := os.read(fd, size):
            yield data
    finally:
        os.close(fd)
