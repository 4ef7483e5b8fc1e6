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
import os
import shutil
from collections.abc import Iterable
from pathlib import Path

from ..core.folders import FolderInfo
from ..core.naming import WORK_HOME, WORK_UID
from ..core.resources import Mount, validate_folder_name
from ..core.workdir import MOUNT_POINT
from ..errors import Conflict, InvalidRequest, NotFound
from .agents.base import BindMount


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
        sees the folders; every folder must exist here."""
        result = []
        for mount in mounts:
            self.path(mount.name)
            target = f"{WORK_HOME}/{mount.name}"
            result.append(BindMount(os.path.join(root, mount.name), target, mount.readonly))
        return tuple(result)

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


def notebook_mount(host_root: str | None) -> tuple[BindMount, ...]:
    """The bind mount of a session's notebook folder (``LaunchSpec.workdir``) at
    ``core.workdir.MOUNT_POINT``, read-write; none when it has none. The launcher
    calls this for every agent (the provisioner sets it only when all are this
    machine's engine); a folder gone meanwhile fails the launch saying so."""
    if host_root is None:
        return ()
    if not os.path.isabs(host_root) or not os.path.isdir(host_root):
        raise InvalidRequest(
            f"the notebook's folder {host_root} is not a directory on this machine "
            "(set c.ClusterProvisioner.mount_notebook_dir = False to start kernels in "
            f"{WORK_HOME})",
            "workdir",
        )
    return (BindMount(host_root, MOUNT_POINT, False),)
