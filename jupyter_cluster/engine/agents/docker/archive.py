"""The tar archive of a container's start-up files, as Docker's ``put_archive`` takes it.

Called by :meth:`~.agent.DockerAgent.put_files`. Owners and modes come from each
:class:`~jupyter_cluster.engine.agents.base.FileEntry`; the archive is PAX, so
large uids (``ContainerHardening.work_uid``) are kept exactly.
"""

from __future__ import annotations

import io
import tarfile
import time
from collections.abc import Sequence

from ..base import FileEntry


def files_tar(files: Sequence[FileEntry]) -> bytes:
    """``files`` (and directories, named pipes, symbolic links) as one uncompressed
    PAX tar archive."""
    buffer = io.BytesIO()
    now = int(time.time())  # a float mtime would give every member a PAX header of its own
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for entry in files:
            info = tarfile.TarInfo(entry.path.lstrip("/"))
            info.mode, info.uid, info.gid, info.mtime = entry.mode, entry.uid, entry.gid, now
            if entry.link:
                info.type, info.linkname = tarfile.SYMTYPE, entry.link
                tar.addfile(info)
            elif entry.directory or entry.fifo:
                info.type = tarfile.DIRTYPE if entry.directory else tarfile.FIFOTYPE
                tar.addfile(info)
            else:
                info.size = len(entry.content)
                tar.addfile(info, io.BytesIO(entry.content))
    return buffer.getvalue()
