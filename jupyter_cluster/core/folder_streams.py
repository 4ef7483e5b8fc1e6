"""What the Engine's folder-file methods hand back: a path opened for reading, an upload.

Front ends (the REST handlers of ``folders/{name}/files/{path}``, the CLI's ``folder
ls``/``folder cp``) open paths inside data folders through the Engine protocol
(:mod:`jupyter_cluster.engine.api`): the local engine serves them from disk
(:mod:`jupyter_cluster.engine.folder_file_ops`), the shared service's client over the
service's own routes, as the token's user
(:mod:`jupyter_cluster.client.remote_folder_files`). Both stream in chunks of at most
:data:`CHUNK` bytes and keep at most a few chunks in memory, whatever the file's size.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, Protocol

#: Largest piece of a file read or sent at once.
CHUNK = 1 << 20


class FolderRead(Protocol):
    """A path opened for reading: a directory's entries, or a file's bytes."""

    #: The directory's entries (``name``, ``type``, ``size``, ``mtime``); None for a file.
    entries: list[dict[str, Any]] | None
    #: The file's size in bytes (0 for a directory).
    size: int

    def chunks(self) -> AsyncIterator[bytes]:
        """The file's bytes, a chunk at a time (nothing for a directory); closes at the end."""
        ...

    async def aclose(self) -> None:
        """Let go of the file (safe to call twice, and after :meth:`chunks` ended)."""
        ...


class FolderUpload(Protocol):
    """A file being written: :meth:`write` chunks, then :meth:`commit` or :meth:`abort`.

    Nothing replaces the target until :meth:`commit`; an aborted upload leaves nothing.
    """

    async def write(self, data: bytes) -> None:
        """Append ``data`` (waits while the other end is behind: bounded memory)."""
        ...

    async def commit(self) -> int:
        """Put the complete file in place; its size."""
        ...

    def abort(self) -> None:
        """Drop what was written (a cut-short upload); safe to call twice."""
        ...
