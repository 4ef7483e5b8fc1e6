"""Data folders mounted read-only all the way down, on Docker engines before 25 too.

Called by the data folders' ``bind_mounts`` (:mod:`.folders`, :mod:`.folder_space`),
which :meth:`~.launching.SessionLauncher.mounts_on` asks for every launch and warm set
with data folders. A read-only data folder (a shared one, or ``--mount NAME:ro``) is a
read-only bind mount; engines before 25 leave a file system mounted below it
writable in the container (see :mod:`..core.mount_table`). So such a folder is bound
without what is mounted below it, and each mount point that this machine's mount
table shows below it is bound on top, read-only, from where the agent sees it.
Docker mounts binds parents first. What the agent's host alone has mounted below a
folder (an agent on another host, a mount the engine's host lacks) is not shown in
its containers, rather than shown writable: the containers see what the engine,
and its folder routes, see.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from ..core.mount_table import mounted_below
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
    ``folders``), each read-only one without what is mounted below it and followed by
    a read-only bind of each mount point below its folder in this machine's mount
    table, from where the agent sees it to the same place in the container.
    ``mountinfo``: the table's text (read here when None, and only when a bind is
    read-only)."""
    result: list[BindMount] = []
    for bind, folder in zip(binds, folders, strict=True):
        if not bind.readonly or bind.volume:
            result.append(bind)
            continue
        if mountinfo is None:
            mountinfo = read_mount_table()
        result.append(replace(bind, recursive=False))
        for below in mounted_below(mountinfo, os.path.realpath(folder)):
            source = os.path.join(bind.source, below)
            target = f"{bind.target.rstrip('/')}/{below}"
            result.append(BindMount(source, target, readonly=True, recursive=False))
    return tuple(result)
