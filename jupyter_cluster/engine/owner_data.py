"""The local engine's per-owner data: data folders and launch profiles.

A base of :class:`~jupyter_cluster.engine.manager.ClusterManager` (its ``folders``,
an :class:`~.owned.OwnerFolders`, and ``profile_store``, a
:class:`~.store.profiles.ProfileStore`): the Engine protocol's folder and profile
methods, which the CLI, the REST handlers and the launch gate call.
"""

from __future__ import annotations

import builtins

from ..core.folders import FolderInfo
from ..core.profiles import Profile
from .folder_space import FolderSpace
from .owned import OwnerFolders
from .store.profiles import ProfileStore


class OwnerData:
    """Data folders and launch profiles, each kept per owner."""

    folders: OwnerFolders
    profile_store: ProfileStore

    def folders_for(self, owner: str) -> FolderSpace:
        """The data folders ``owner`` sees."""
        return self.folders.space(owner)

    async def list_folders(self, owner: str = "") -> builtins.list[FolderInfo]:
        """``owner``'s folders and the shared ones (CLI ``folder ls``, ``GET folders``)."""
        return self.folders.list(owner)

    async def create_folder(self, name: str, owner: str = "") -> FolderInfo:
        """Make one of ``owner``'s folders."""
        return self.folders.create(name, owner)

    async def remove_folder(self, name: str, owner: str = "") -> None:
        """Delete one of ``owner``'s folders; refused while an active session mounts it."""
        self.folders.remove(name, owner)

    async def rename_folder(self, name: str, new_name: str, owner: str = "") -> FolderInfo:
        """Rename one of ``owner``'s folders (see OwnerFolders.rename)."""
        return self.folders.rename(name, new_name, owner)

    async def list_profiles(self, owner: str = "") -> builtins.list[Profile]:
        """``owner``'s own launch profiles (CLI ``profile ls``, ``GET profiles``)."""
        return list(self.user_profiles(owner).values())

    def user_profiles(self, owner: str) -> dict[str, Profile]:
        """``owner``'s own launch profiles by name (the launch gate merges them)."""
        return self.profile_store.list(owner)

    async def save_profile(self, profile: Profile, owner: str = "") -> Profile:
        """Keep ``profile`` as ``owner``'s (replacing one of that name)."""
        self.profile_store.save(owner, profile)
        return profile

    async def remove_profile(self, name: str, owner: str = "") -> None:
        """Delete ``owner``'s profile ``name`` (NotFound when there is none)."""
        self.profile_store.remove(owner, name)
