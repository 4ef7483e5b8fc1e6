"""OwnerFolders: the data folders each owner sees, and which sessions mount them.

Owned by :class:`~jupyter_cluster.engine.manager.ClusterManager`, which hands it its
settings (read at each call: ``data_root``, ``folders_per_owner``,
``shared_folders``) and the store. The CLI (``folder``), the REST handlers and the
shared service reach it through the manager; the launcher asks it for an owner's
:class:`~.folder_space.FolderSpace` to check and bind-mount a launch's folders.
Folders are scoped to an owner when ``folders_per_owner`` is on.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable

from ..core.folders import FolderInfo
from ..core.state import ACTIVE
from .folder_space import FolderSpace
from .settings import ManagerSettings
from .store.sessions import Store


class OwnerFolders:
    """Per-owner views of the data folders (see the module docstring)."""

    def __init__(
        self, settings: ManagerSettings, store: Store, work_uid: Callable[[], int]
    ) -> None:
        """``work_uid``: who owns new folders, read when one is made."""
        self.settings = settings
        self.store = store
        self.work_uid = work_uid

    def space(self, owner: str) -> FolderSpace:
        """The data folders ``owner`` sees (see :mod:`.folder_space`)."""
        s = self.settings
        return FolderSpace(
            s.data_root,
            owner,
            per_owner=s.folders_per_owner,
            shared=s.shared_folders,
            work_uid=self.work_uid(),
        )

    def mounting(self, folder: str, owner: str = "") -> builtins.list[str]:
        """Names of active sessions that mount data folder ``folder`` (of ``owner``,
        when each owner has their own folders)."""
        return [
            s.name
            for s in self.store.list()
            if s.status in ACTIVE
            and any(m.name == folder for m in s.spec.mounts)
            and (not self.settings.folders_per_owner or s.owner == owner)
        ]

    def list(self, owner: str = "") -> builtins.list[FolderInfo]:
        """``owner``'s folders and the shared ones (CLI ``folder ls``, ``GET folders``)."""
        return self.space(owner).list()

    def create(self, name: str, owner: str = "") -> FolderInfo:
        """Make one of ``owner``'s folders."""
        return self.space(owner).create(name)

    def remove(self, name: str, owner: str = "") -> None:
        """Delete one of ``owner``'s folders; refused while an active session mounts it."""
        self.space(owner).remove(name, self.mounting(name, owner))

    def rename(self, name: str, new_name: str, owner: str = "") -> FolderInfo:
        """Rename one of ``owner``'s folders; refused while an active session mounts it."""
        return self.space(owner).rename(name, new_name, self.mounting(name, owner))
