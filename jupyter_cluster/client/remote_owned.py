"""What the caller owns on the shared service: data folders and launch profiles.

Mixed into :class:`~jupyter_cluster.client.remote_engine.RemoteEngine` on top of
the files inside data folders (:mod:`.remote_folder_files`); the service decides
whose they are from the token, so ``owner`` (a local engine's argument) is unused.
"""

from __future__ import annotations

import builtins
from urllib.parse import quote

from ..core.folders import FolderInfo
from ..core.profiles import Profile, make_profile
from .remote_folder_files import RemoteFolderFiles


def ref_path(ref: str) -> str:
    """``ref`` (a session, folder or profile name) as one segment of a route."""
    return quote(ref, safe="")


class RemoteOwned(RemoteFolderFiles):
    """The caller's data folders (and the shared ones) and launch profiles."""

    async def list_folders(self, owner: str = "") -> builtins.list[FolderInfo]:
        """The caller's data folders and the shared ones."""
        return [FolderInfo.from_dict(f) for f in await self.http.call("GET", "folders")]

    async def create_folder(self, name: str, owner: str = "") -> FolderInfo:
        """Make one of the caller's folders on the service."""
        return FolderInfo.from_dict(await self.http.call("POST", "folders", {"name": name}))

    async def remove_folder(self, name: str, owner: str = "") -> None:
        """Delete one of the caller's folders."""
        await self.http.call("DELETE", f"folders/{ref_path(name)}")

    async def list_profiles(self, owner: str = "") -> builtins.list[Profile]:
        """The caller's own launch profiles (the service keeps them)."""
        found = await self.http.call("GET", "profiles")
        return [
            make_profile(p["name"], {k: p[k] for k in ("description", "fields")}) for p in found
        ]

    async def save_profile(self, profile: Profile, owner: str = "") -> Profile:
        """Keep ``profile`` as the caller's on the service."""
        body = {"description": profile.description, "fields": dict(profile.fields)}
        await self.http.call("PUT", f"profiles/{ref_path(profile.name)}", body)
        return profile

    async def remove_profile(self, name: str, owner: str = "") -> None:
        """Delete one of the caller's launch profiles."""
        await self.http.call("DELETE", f"profiles/{ref_path(name)}")
