"""Named data folders: the host directories a session can mount by name.

A folder is a directory under the configured root (default: the Jupyter data dir).
Users name folders, never paths, so nobody can mount an arbitrary host path. The
one other host directory a session may mount is the Jupyter server's own folder,
which only the provisioner sets (``LaunchSpec.workdir``, :func:`notebook_mount`).
Used by the CLI (``jupyter cluster folder …``), the REST API and the manager (to
resolve ``--mount NAME`` into bind mounts).
"""

from __future__ import annotations

import builtins
import ctypes
import errno
import os
import shutil
import stat
from collections.abc import Iterable
from pathlib import Path

from ..core.folders import FolderInfo
from ..core.naming import WORK_HOME, WORK_UID
from ..core.resources import Mount, validate_folder_name
from ..core.workdir import MOUNT_POINT, read_only_root
from ..errors import Conflict, InvalidRequest, NotFound
from .agents.base import BindMount
from .folder_submounts import read_only_throughout


class DataFolders:
    """Create, list, resolve and remove the data folders under ``root``."""

    def __init__(self, root: str, work_uid: int = WORK_UID) -> None:
        """``work_uid``: who owns new folders (``ContainerHardening.work_uid``)."""
        self.root = Path(root)
        self.work_uid = work_uid

    def path(self, name: str) -> Path:
        """The directory of folder ``name``; raises NotFound if it does not exist."""
        validate_folder_name(name, "mounts")
        path = self.root / name
        if path.is_symlink():  # Docker would follow it to any host path
            raise InvalidRequest(
                f"data folder {name!r} is a link, not a folder: links in the data-folder root "
                "are never mounted; replace it with a folder",
                "mounts",
            )
        if not path.is_dir():
            raise NotFound(
                f"no data folder named {name!r}; create it with `jupyter cluster folder create "
                f"{name}` (see `jupyter cluster folder ls`)"
            )
        return path

    def bind_mounts(self, mounts: Iterable[Mount], root: str) -> tuple[BindMount, ...]:
        """Bind mounts of ``mounts`` at /home/work/<name>, with ``root`` as the agent
        sees the folders; every folder must exist here. A read-only one is read-only
        all the way down (see :mod:`.folder_submounts`)."""
        binds, paths = [], []
        for mount in mounts:
            paths.append(self.path(mount.name))
            target = f"{WORK_HOME}/{mount.name}"
            binds.append(BindMount(os.path.join(root, mount.name), target, mount.readonly))
        return read_only_throughout(binds, paths)

    def create(self, name: str) -> FolderInfo:
        """Make a new folder owned by the containers' user (``work_uid``)."""
        validate_folder_name(name, "name")
        path = self.root / name
        if path.exists():
            raise Conflict(f"a data folder named {name!r} already exists")
        path.mkdir(parents=True)
        try:
            os.chown(path, self.work_uid, self.work_uid)
        except PermissionError:
            # Not root: let work in the containers write anyway.
            path.chmod(0o777)
        return FolderInfo(name, str(path))

    def list(self) -> builtins.list[FolderInfo]:
        """All folders, sorted by name."""
        if not self.root.is_dir():
            return []
        return [
            FolderInfo(p.name, str(p))
            for p in sorted(self.root.iterdir())
            if p.is_dir() and not p.is_symlink() and not p.name.startswith(".")
        ]

    def remove(self, name: str, in_use_by: builtins.list[str] | None = None) -> None:
        """Delete a folder and its content; refused while a session mounts it."""
        path = self.path(name)
        if in_use_by:
            raise Conflict(
                f"data folder {name!r} is mounted by session(s) {', '.join(in_use_by)}; "
                "terminate them first"
            )
        if path.is_symlink():
            raise InvalidRequest(f"{name!r} is a link, not a folder; remove it by hand", "name")
        shutil.rmtree(path)

    def rename(
        self, name: str, new_name: str, in_use_by: builtins.list[str] | None = None
    ) -> FolderInfo:
        """Give folder ``name`` the new name ``new_name`` (valid as for :meth:`create`);
        refused while a session mounts it (its containers bind-mount the folder by
        its path) or when ``new_name`` exists. One rename(2) in the root's directory,
        by name and without following a link, that never replaces what is there."""
        validate_folder_name(name, "name")
        validate_folder_name(new_name, "name")
        if in_use_by:
            raise Conflict(
                f"data folder {name!r} is mounted by session(s) {', '.join(in_use_by)}: their "
                "containers use it by its path; terminate them first, then rename it"
            )
        try:  # the root is the administrator's (or the service's per owner): may be a link
            root = os.open(self.root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except FileNotFoundError:
            raise NotFound(f"no data folder named {name!r}") from None
        try:
            try:
                st = os.stat(name, dir_fd=root, follow_symlinks=False)
            except FileNotFoundError:
                raise NotFound(f"no data folder named {name!r}") from None
            if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode):
                raise InvalidRequest(f"{name!r} is a link or a file, not a folder", "name")
            if name != new_name:
                _rename_noreplace(root, name, new_name)
        finally:
            os.close(root)
        return FolderInfo(new_name, str(self.root / new_name))


_RENAME_NOREPLACE = 1  # linux/fs.h


def _rename_noreplace(dir_fd: int, name: str, new_name: str) -> None:
    """Rename entry ``name`` of ``dir_fd`` to ``new_name`` unless that exists: Linux's
    renameat2(RENAME_NOREPLACE) in one step; elsewhere (or on a file system without
    it) a check, then rename(2), which still never follows a link."""
    exists = Conflict(f"a data folder named {new_name!r} already exists")
    renameat2 = getattr(ctypes.CDLL(None, use_errno=True), "renameat2", None)
    if renameat2 is not None:
        if renameat2(dir_fd, name.encode(), dir_fd, new_name.encode(), _RENAME_NOREPLACE) == 0:
            return
        err = ctypes.get_errno()
        if err in (errno.EEXIST, errno.ENOTEMPTY):
            raise exists
        if err == errno.ENOENT:  # removed meanwhile
            raise NotFound(f"no data folder named {name!r}")
        if err not in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP):
            raise OSError(err, os.strerror(err), name)
    try:
        os.stat(new_name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        os.rename(name, new_name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        return
    raise exists


def notebook_mount(host_root: str | None) -> tuple[BindMount, ...]:
    """The bind mount of a session's notebook folder (``LaunchSpec.workdir``) at
    ``core.workdir.MOUNT_POINT``: read-write, or read-only when root owns it (see
    ``core.workdir.read_only_root``); none when it has none. The launcher calls this
    for every agent (the provisioner sets it only when all are this machine's
    engine); a folder gone meanwhile fails the launch saying so."""
    if host_root is None:
        return ()
    if not os.path.isabs(host_root) or not os.path.isdir(host_root):
        raise InvalidRequest(
            f"the notebook's folder {host_root} is not a directory on this machine "
            "(set c.ClusterProvisioner.mount_notebook_dir = False to start kernels in "
            f"{WORK_HOME})",
            "workdir",
        )
    if read_only_root(os.stat(host_root).st_uid):
        # What is mounted below it (a root folder of "/" has /run, /tmp…) stays out:
        # Docker's read-only bind leaves those writable, and they are not the folder.
        return (BindMount(host_root, MOUNT_POINT, readonly=True, recursive=False),)
    return (BindMount(host_root, MOUNT_POINT),)
