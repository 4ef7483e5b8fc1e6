"""Files inside one data folder: list, read, write, mkdir, rename, delete.

Used by the REST routes ``folders/{name}/files/{path}`` and the CLI's ``folder ls
NAME/PATH`` and ``folder cp``, through :meth:`FolderSpace.files`. In team mode the
service runs this as root on paths users choose, so every operation walks the path
one directory at a time from the folder's own descriptor with ``O_NOFOLLOW`` (and
acts on the last component through its parent's descriptor with
``follow_symlinks=False``): a link anywhere in the path is refused, and a link
swapped in after a check is still never followed, because nothing re-resolves a
path by name from the top. Writes go to a temporary file in the target directory,
renamed over the target when complete. New files and directories belong to the
containers' user (``work_uid``) so sessions can use them; shared folders are
read-only.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
from collections.abc import Iterator
from typing import Any

from ..core.folder_paths import join_parts
from ..errors import Conflict, InvalidRequest, NotFound
from .folder_descriptors import DIR_FLAGS, Upload, chunks, is_link, remove_tree

CHUNK = 1 << 20
_TEMP_PREFIX = ".upload-"


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "directory"
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISLNK(mode):
        return "link"
    return "other"


class FolderFiles:
    """The files of one folder at ``root`` (a directory the engine resolved by name)."""

    def __init__(self, name: str, root: str, *, readonly: bool, work_uid: int) -> None:
        self.name = name
        self.root = root
        self.readonly = readonly
        self.work_uid = work_uid

    # -- walking -------------------------------------------------------------------

    def _where(self, parts: tuple[str, ...]) -> str:
        return f"{self.name}/{join_parts(parts)}".rstrip("/")

    def _open_dir(self, parts: tuple[str, ...]) -> int:
        """A descriptor of directory ``parts``; no link is followed on the way."""
        fd = os.open(self.root, DIR_FLAGS)
        for i, part in enumerate(parts):
            try:
                nxt = os.open(part, DIR_FLAGS, dir_fd=fd)
            except OSError as exc:
                if exc.errno == errno.ENOTDIR and is_link(part, fd):
                    exc = OSError(errno.ELOOP, "link")
                os.close(fd)
                self._raise(exc, parts[: i + 1])
            os.close(fd)
            fd = nxt
        return fd

    def _raise(self, exc: OSError, parts: tuple[str, ...]) -> Any:
        where = self._where(parts)
        if exc.errno == errno.ENOENT:
            raise NotFound(f"no file or directory {where!r}") from None
        if exc.errno in (errno.ELOOP, errno.EMLINK):
            raise InvalidRequest(
                f"path: {where!r} is a link; links inside data folders are not followed", "path"
            ) from None
        if exc.errno == errno.ENOTDIR:
            raise InvalidRequest(f"path: {where!r} is not a directory", "path") from None
        if exc.errno == errno.EISDIR:
            raise InvalidRequest(f"path: {where!r} is a directory, not a file", "path") from None
        if exc.errno == errno.EEXIST:
            raise Conflict(f"{where!r} already exists") from None
        if exc.errno == errno.ENOTEMPTY:
            raise Conflict(f"{where!r} is not empty; delete it with recursive") from None
        if exc.errno in (errno.EACCES, errno.EPERM):
            raise Conflict(f"no permission to change {where!r}") from None
        raise exc

    def _parent(self, parts: tuple[str, ...]) -> tuple[int, str]:
        if not parts:
            raise InvalidRequest(
                "path: give a path inside the folder (the folder itself is changed with "
                "`jupyter cluster folder create|rm`)",
                "path",
            )
        return self._open_dir(parts[:-1]), parts[-1]

    def _writable(self) -> None:
        if self.readonly:
            raise Conflict(f"data folder {self.name!r} is shared and read-only")

    def _own(self, name: str, dir_fd: int, mode: int) -> None:
        try:
            os.chown(name, self.work_uid, self.work_uid, dir_fd=dir_fd, follow_symlinks=False)
        except PermissionError:  # not root: let work in the containers write anyway
            os.chmod(name, mode, dir_fd=dir_fd)

    # -- reading -------------------------------------------------------------------

    def info(self, parts: tuple[str, ...]) -> dict[str, Any]:
        """name, type (file/directory/link/other), size and mtime of ``parts``."""
        if not parts:
            fd = self._open_dir(())
            try:
                st = os.fstat(fd)
            finally:
                os.close(fd)
            return {"name": "", "type": "directory", "size": st.st_size, "mtime": st.st_mtime}
        fd, last = self._parent(parts)
        try:
            st = os.stat(last, dir_fd=fd, follow_symlinks=False)
        except OSError as exc:
            self._raise(exc, parts)
        finally:
            os.close(fd)
        return {"name": last, "type": _kind(st.st_mode), "size": st.st_size, "mtime": st.st_mtime}

    def list(self, parts: tuple[str, ...]) -> list[dict[str, Any]]:
        """The entries of directory ``parts``, sorted by name (links listed, not followed)."""
        fd = self._open_dir(parts)
        try:
            result = []
            for name in sorted(os.listdir(fd)):
                if name.startswith(_TEMP_PREFIX):
                    continue
                try:
                    st = os.stat(name, dir_fd=fd, follow_symlinks=False)
                except FileNotFoundError:
                    continue
                result.append(
                    {
                        "name": name,
                        "type": _kind(st.st_mode),
                        "size": st.st_size,
                        "mtime": st.st_mtime,
                    }
                )
            return result
        finally:
            os.close(fd)

    def open_read(self, parts: tuple[str, ...]) -> tuple[int, int]:
        """(descriptor, size) of regular file ``parts``, opened without following a link."""
        dir_fd, last = self._parent(parts)
        try:
            fd = os.open(
                last, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, dir_fd=dir_fd
            )
        except OSError as exc:
            self._raise(exc, parts)
        finally:
            os.close(dir_fd)
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            os.close(fd)
            raise InvalidRequest(f"path: {self._where(parts)!r} is not a file", "path")
        return fd, st.st_size

    def read(self, parts: tuple[str, ...], chunk: int = CHUNK) -> Iterator[bytes]:
        """The bytes of file ``parts`` in chunks (the file is opened before the first)."""
        fd, _ = self.open_read(parts)
        return chunks(fd, chunk)

    # -- writing -------------------------------------------------------------------

    def writer(self, parts: tuple[str, ...]) -> Upload:
        """A new upload to file ``parts``; nothing replaces the file until it commits."""
        self._writable()
        dir_fd, last = self._parent(parts)
        try:
            st = os.stat(last, dir_fd=dir_fd, follow_symlinks=False)
        except FileNotFoundError:
            pass
        except OSError as exc:
            os.close(dir_fd)
            self._raise(exc, parts)
        else:
            if stat.S_ISDIR(st.st_mode):
                os.close(dir_fd)
                raise Conflict(f"{self._where(parts)!r} is a directory; pick a file name")
        temp = f"{_TEMP_PREFIX}{secrets.token_hex(8)}"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        try:
            fd = os.open(temp, flags, 0o644, dir_fd=dir_fd)
        except OSError as exc:
            os.close(dir_fd)
            self._raise(exc, parts)
        self._own(temp, dir_fd, 0o666)
        return Upload(dir_fd, fd, temp, last)

    def mkdir(self, parts: tuple[str, ...]) -> None:
        """Make directory ``parts`` (its parent must exist)."""
        self._writable()
        fd, last = self._parent(parts)
        try:
            os.mkdir(last, 0o755, dir_fd=fd)
            self._own(last, fd, 0o777)
        except OSError as exc:
            self._raise(exc, parts)
        finally:
            os.close(fd)

    def rename(self, parts: tuple[str, ...], to: tuple[str, ...]) -> None:
        """Move ``parts`` to ``to`` inside the same folder; never over an existing entry."""
        self._writable()
        src_fd, src = self._parent(parts)
        try:
            dst_fd, dst = self._parent(to)
        except BaseException:
            os.close(src_fd)
            raise
        try:
            try:
                os.stat(dst, dir_fd=dst_fd, follow_symlinks=False)
            except FileNotFoundError:
                pass
            else:
                raise Conflict(f"{self._where(to)!r} already exists; pick another name")
            os.rename(src, dst, src_dir_fd=src_fd, dst_dir_fd=dst_fd)
        except OSError as exc:
            if exc.errno == errno.EINVAL:  # into itself
                raise InvalidRequest("to: cannot move a directory into itself", "to") from None
            self._raise(exc, parts)
        finally:
            os.close(src_fd)
            os.close(dst_fd)

    def delete(self, parts: tuple[str, ...], recursive: bool = False) -> None:
        """Delete file (or link) ``parts``, or a directory: empty, or any with ``recursive``."""
        self._writable()
        fd, last = self._parent(parts)
        try:
            st = os.stat(last, dir_fd=fd, follow_symlinks=False)
            if not stat.S_ISDIR(st.st_mode):
                os.unlink(last, dir_fd=fd)
            elif recursive:
                remove_tree(last, fd)
            else:
                os.rmdir(last, dir_fd=fd)
        except OSError as exc:
            self._raise(exc, parts)
        finally:
            os.close(fd)
