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
import secrets
import tempfile
from collections.abc import Iterator
from typing import IO, Any


@contextlib.contextmanager
def replaced_whole(
    path: str | os.PathLike[str], mode: str = "w", *, private: bool = True, **kwargs: Any
) -> Iterator[IO[Any]]:
    """A new file in ``path``'s directory, opened with ``mode`` and ``kwargs`` as
    :func:`open` takes them; it replaces ``path`` once the block ends, and is removed
    instead if the block raises. It is 0600 if ``private``, else what :func:`open`
    makes under the process's umask (``jupyter cluster folder cp`` downloading a file)."""
    where = os.path.dirname(os.path.abspath(path))
    prefix = f".{os.path.basename(path)}."
    fd, tmp = tempfile.mkstemp(dir=where, prefix=prefix) if private else _made(where, prefix)
    try:
        with os.fdopen(fd, mode, **kwargs) as f:
            yield f
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def _made(where: str, prefix: str) -> tuple[int, str]:
    """A new file of a free name in ``where``, mode 0666 less the umask (the kernel
    applies it: nothing reads or sets the process-wide umask); its fd and path."""
    while True:
        tmp = os.path.join(where, prefix + secrets.token_hex(4))
        with contextlib.suppress(FileExistsError):  # O_EXCL: never an existing file or link
            return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666), tmp
