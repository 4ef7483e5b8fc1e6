"""Files replaced whole: written beside their place, then renamed over it.

A reader (another process, another request) finds the old file or the new one,
never a part. Used where something reads while we write: the terminals' ssh files
(:mod:`jupyter_cluster.reach.terminal`, several terminals of one session open at
once), the kept container logs (:mod:`jupyter_cluster.engine.log_archive`) and
``jupyter cluster cp``'s download (:mod:`jupyter_cluster.cli.folder_commands`).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from typing import IO, Any


@contextlib.contextmanager
def replaced_whole(
    path: str | os.PathLike[str], mode: str = "w", *, private: bool = True, **kwargs: Any
) -> Iterator[IO[Any]]:
    """A new file in ``path``'s directory, opened with ``mode`` and ``kwargs`` as
    :func:`open` takes them; it replaces ``path`` once the block ends, and is removed
    instead if the block raises. It is 0600 if ``private``, else as :func:`open`
    would make it under the process's umask (read with :func:`os.umask`, so for
    single-threaded callers: ``jupyter cluster folder cp`` downloading a file)."""
    where = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=where, prefix=f".{os.path.basename(path)}.")
    try:
        if not private:
            umask = os.umask(0o077)
            os.umask(umask)
            os.fchmod(fd, 0o666 & ~umask)
        with os.fdopen(fd, mode, **kwargs) as f:
            yield f
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
