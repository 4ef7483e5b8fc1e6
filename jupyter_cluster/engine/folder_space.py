"""The data folders one owner sees: their own, and the shared read-only set.

Used by the manager for every launch (checking and mounting ``mounts``) and for
the folder commands of the CLI and REST. Single-user mode keeps one set of
folders under ``data_root``, as before. With ``ClusterManager.folders_per_owner``
(the shared service of a team) each owner's folders live apart, under
``data_root/.owners/<owner>/``: a user lists, mounts, creates and removes only
their own, and two users may both have a folder called ``data``. Folders named
in ``ClusterManager.shared_folders`` live under ``data_root/.shared/``, are seen
by everyone and are always mounted read-only; only an administrator makes them
(on the host). Both roots start with a dot, so they are never a folder name.
"""

from __future__ import annotations

import builtins
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from ..core.folders import FolderInfo
from ..core.naming import WORK_HOME, WORK_UID
from ..core.resources import Mount, validate_folder_name
from ..errors import Conflict, InvalidRequest, NotFound
from .agents.base import BindMount
from .folder_files import FolderFiles
from .folder_submounts import read_only_throughout
from .folders import DataFolders

OWNERS_DIR = ".owners"
SHARED_DIR = ".shared"
#: Owner names that may become a directory name (JupyterHub's usual user names).
_OWNER_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@+-]{0,127}")


def owner_dir(owner: str) -> str:
    """The directory name of ``owner``'s folders; InvalidRequest if it can't be one."""
    if not _OWNER_RE.fullmatch(owner or "") or ".." in owner:
        raise InvalidRequest(
            f"user name {owner!r} cannot hold data folders (letters, digits and ._@+- only)",
            "owner",
        )
    return owner


class FolderSpace:
    """One owner's view of the data folders (see the module docstring)."""

    def __init__(
        self,
        data_root: str,
        owner: str,
        *,
        per_owner: bool,
        shared: Sequence[str] = (),
        work_uid: int = WORK_UID,
    ) -> None:
        self.data_root = Path(data_root)
        mine = self.data_root / OWNERS_DIR / owner_dir(owner) if per_owner else self.data_root
        self.own = DataFolders(str(mine), work_uid)
        self.shared = DataFolders(str(self.data_root / SHARED_DIR))
        self.shared_names = tuple(shared)

    def _is_shared(self, name: str) -> bool:
        return name in self.shared_names and not (self.own.root / name).is_dir()

    def path(self, name: str) -> Path:
        """The directory of folder ``name`` (the owner's own first, then a shared one)."""
        if self._is_shared(name):
            return self.shared.path(name)
        return self.own.path(name)

    def files(self, name: str) -> FolderFiles:
        """The files inside folder ``name``: read-only when it is a shared one."""
        shared = self._is_shared(name)
        root = self.path(name)
        return FolderFiles(name, str(root), readonly=shared, work_uid=self.own.work_uid)

    def names(self) -> builtins.list[str]:
        """Every folder this owner may mount, sorted."""
        return sorted({f.name for f in self.list()})

    def list(self) -> builtins.list[FolderInfo]:
        """The owner's folders and the shared ones that exist."""
        shared = [
            FolderInfo(f.name, f.path, shared=True)
            for f in self.shared.list()
            if f.name in self.shared_names
        ]
        own = self.own.list()
        mine = {f.name for f in own}
        return sorted(own + [f for f in shared if f.name not in mine], key=lambda f: f.name)

    def bind_mounts(self, mounts: Iterable[Mount], agent_root: str) -> tuple[BindMount, ...]:
        """Bind mounts of ``mounts`` with ``agent_root`` as the agent sees ``data_root``;
        shared folders are read-only whatever was asked, all the way down (see
        :mod:`.folder_submounts`)."""
        binds, paths = [], []
        for mount in mounts:
            shared = self._is_shared(mount.name)
            folder = self.path(mount.name)
            paths.append(folder)
            source = str(Path(agent_root) / folder.relative_to(self.data_root))
            target = f"{WORK_HOME}/{mount.name}"
            binds.append(BindMount(source, target, mount.readonly or shared))
        return read_only_throughout(binds, paths)

    def create(self, name: str) -> FolderInfo:
        """Make one of the owner's folders (a shared name is the administrator's)."""
        validate_folder_name(name, "name")
        if name in self.shared_names:
            raise Conflict(f"{name!r} is a shared folder; pick another name for your own")
        self.own.root.mkdir(parents=True, exist_ok=True)
        return self.own.create(name)

    def remove(self, name: str, in_use_by: builtins.list[str] | None = None) -> None:
        """Delete one of the owner's folders (never a shared one)."""
        if self._is_shared(name):
            raise Conflict(f"{name!r} is a shared folder; only an administrator removes it")
        if not self.own.root.is_dir():
            raise NotFound(f"no data folder named {name!r}")
        self.own.remove(name, in_use_by)

    def rename(
        self, name: str, new_name: str, in_use_by: builtins.list[str] | None = None
    ) -> FolderInfo:
        """Give one of the owner's folders a new name (never a shared one, nor a
        shared folder's name); see :meth:`.folders.DataFolders.rename`."""
        if self._is_shared(name):
            raise Conflict(f"{name!r} is a shared folder; only an administrator renames it")
        validate_folder_name(new_name, "name")
        if new_name in self.shared_names:
            raise Conflict(f"{new_name!r} is a shared folder; pick another name for your own")
        return self.own.rename(name, new_name, in_use_by)
