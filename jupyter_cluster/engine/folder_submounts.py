"""Data folders mounted read-only all the way down, on Docker engines before 25 too.

Called by :meth:`~.launching.Launching.mounts_on` for every launch and warm set with
data folders. A read-only data folder (a shared one, or ``--mount NAME:ro``) is a
read-only bind mount; engines before 25 leave a file system mounted below it
writable in the container (see :mod:`..core.mount_table`). So each read-write mount
point that this machine's mount table shows below such a folder is bound again,
read-only, over itself in the container. Docker mounts binds parents first, so these
land on top. An agent on another host sees its own mounts: what only it has mounted
below a folder is not seen here (the README asks to mount such ones read-only on
the agent).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from ..core.mount_table import writable_below
from .agents.base import BindMount

#: This process's mount table; the engine runs beside the local agent's Docker.
MOUNTINFO = "/proc/self/mountinfo"


def read_mount_table(path: str = MOUNTINFO) -> str:
    """The mount table's text; empty when it cannot be read (not Linux, say)."""
    try:
        with open(path, encoding="utf-8", errors="surrogateescape") as table:
            return table.read()
    except OSError:
        return ""


def read_only_throughout(
    binds: Sequence[BindMount], folders: Sequence[Path], mountinfo: str | None = None
) -> tuple[BindMount, ...]:
    """``binds`` (one per data folder, whose directories this machine sees at
    ``folders``), each read-only one followed by a read-only bind of every file
    system mounted read-write below its folder, from where the agent sees it to the
    same place in the container. ``mountinfo``: the mount table's text (read here
    when None, and only when a bind is read-only)."""
    result: list[BindMount] = []
    for bind, folder in zip(binds, folders, strict=True):
        result.append(bind)
        if not bind.readonly or bind.volume:
            continue
        if mountinfo is None:
            mountinfo = read_mount_table()
        for below in writable_below(mountinfo, os.path.realpath(folder)):
            source = os.path.join(bind.source, below)
            target = f"{bind.target.rstrip('/')}/{below}"
            result.append(BindMount(source, target, readonly=True))
    return tuple(result)
