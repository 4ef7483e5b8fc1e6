"""The local engine's files inside data folders, as the Engine protocol's methods.

Mixed into :class:`~jupyter_cluster.engine.manager.ClusterManager`: the REST handlers
of ``folders/{name}/files/{path}`` and the CLI's ``folder ls``/``folder cp`` call
these methods on whichever engine they have (the shared service's client does the
same over the service's routes: :mod:`jupyter_cluster.client.remote_folder_files`).
The work is :class:`~.folder_files.FolderFiles`'s, which walks every path from the
folder's own descriptor without following a link, so that the shared service,
running as root, only ever acts inside the caller's folder; new files belong to
the containers' user (``work_uid``). ``owner`` picks whose folders (with
``folders_per_owner``); files stream in chunks of :data:`~jupyter_cluster.core.
folder_streams.CHUNK` bytes both ways.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from ..core.folder_paths import join_parts, path_parts
from ..core.folder_streams import CHUNK
from ..errors import InvalidRequest
from .folder_descriptors import Upload
from .folder_files import FolderFiles

if TYPE_CHECKING:
    from .owned import OwnerFolders


def checked(path: tuple[str, ...], field: str = "path") -> tuple[str, ...]:
    """``path`` if its components are what :func:`~jupyter_cluster.core.folder_paths.
    path_parts` makes (no ``..``, no ``/``, no empty or ``.`` part); InvalidRequest
    otherwise. Front ends parse paths with it already; an engine checks again."""
    if not isinstance(path, tuple) or any(not isinstance(p, str) or "/" in p for p in path):
        raise InvalidRequest(f"{field}: give the path as its names, one per level", field)
    if path_parts(join_parts(path), field) != path:
        raise InvalidRequest(f"{field}: {join_parts(path)!r} is not a plain path", field)
    return path


class LocalRead:
    """A directory's entries or an open file of a local folder (see FolderRead)."""

    def __init__(self, entries: list[dict[str, Any]] | None, fd: int = -1, size: int = 0) -> None:
        self.entries = entries
        self.fd = fd
        self.size = size

    async def chunks(self) -> AsyncIterator[bytes]:
        """The file's bytes, read off the event loop a chunk at a time."""
        loop = asyncio.get_running_loop()
        try:
            while self.fd >= 0 and (data := await loop.run_in_executor(None, _read, self.fd)):
                yield data
        finally:
            await self.aclose()

    async def aclose(self) -> None:
        """Close the file."""
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


class LocalUpload:
    """An upload into a local folder (see FolderUpload), written as chunks arrive."""

    def __init__(self, upload: Upload) -> None:
        self.upload = upload

    async def write(self, data: bytes) -> None:
        """Append ``data`` to the temporary file."""
        self.upload.write(data)

    async def commit(self) -> int:
        """Rename the complete file into place; its size."""
        return self.upload.commit()

    def abort(self) -> None:
        """Remove the temporary file."""
        self.upload.abort()


def _read(fd: int) -> bytes:
    return os.read(fd, CHUNK)


class FolderFileOps:
    """The Engine protocol's folder-file methods on this process's disk (a mixin)."""

    folders: OwnerFolders  # ClusterManager's

    def _files(self, name: str, owner: str) -> FolderFiles:
        return self.folders.space(owner).files(name)

    async def folder_entry(
        self, name: str, path: tuple[str, ...], owner: str = ""
    ) -> dict[str, Any]:
        """``name``, ``type`` (file, directory, link, other), ``size`` and ``mtime`` of
        ``path`` in ``owner``'s folder ``name`` (the CLI's ``ls`` of a file, ``cp``)."""
        return self._files(name, owner).info(checked(path))

    async def open_folder_path(
        self, name: str, path: tuple[str, ...], owner: str = ""
    ) -> LocalRead:
        """A directory's entries, or a file opened for streaming (``GET
        folders/{name}/files/{path}``, the CLI's ``ls`` and ``cp`` out)."""
        files, parts = self._files(name, owner), checked(path)
        if files.info(parts)["type"] == "directory":
            return LocalRead(files.list(parts))
        fd, size = files.open_read(parts)
        return LocalRead(None, fd, size)

    async def upload_folder_file(
        self, name: str, path: tuple[str, ...], owner: str = ""
    ) -> LocalUpload:
        """A new upload to file ``path`` (``PUT``, the CLI's ``cp`` in); refused at once
        when the folder is read-only, the parent is missing or ``path`` is a directory."""
        return LocalUpload(self._files(name, owner).writer(checked(path)))

    async def make_folder_dir(self, name: str, path: tuple[str, ...], owner: str = "") -> None:
        """Make directory ``path`` (``POST ?mkdir=1``)."""
        self._files(name, owner).mkdir(checked(path))

    async def move_folder_path(
        self, name: str, path: tuple[str, ...], to: tuple[str, ...], owner: str = ""
    ) -> None:
        """Rename or move ``path`` to ``to`` inside the folder (``PATCH``)."""
        self._files(name, owner).rename(checked(path), checked(to, "to"))

    async def delete_folder_path(
        self, name: str, path: tuple[str, ...], recursive: bool = False, owner: str = ""
    ) -> None:
        """Delete a file, an empty directory, or any directory with ``recursive`` (``DELETE``)."""
        files, parts = self._files(name, owner), checked(path)
        await asyncio.to_thread(files.delete, parts, recursive)
