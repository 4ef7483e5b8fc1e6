"""Reading a Linux mount table (``/proc/self/mountinfo``): what is mounted below a
directory.

Docker engines before 25 make a read-only bind mount read-only at its top only: a
file system mounted below the folder (an NFS dataset an administrator mounted into a
shared data folder, say) stays writable in the container. The engine reads its own
mount table with :func:`mounted_below` and mounts the folder without what is below
it, then each of those read-only on top
(:mod:`jupyter_cluster.engine.folder_submounts`). Pure: given the table's text.
"""

from __future__ import annotations

import re

#: How the kernel escapes a space, tab, newline or backslash in a mount point.
_ESCAPED = re.compile(r"\\([0-7]{3})")


def unescape(field: str) -> str:
    """A mount point as the file system has it (``\\040`` is a space)."""
    return _ESCAPED.sub(lambda m: chr(int(m.group(1), 8)), field)


def mounted_below(mountinfo: str, directory: str) -> list[str]:
    """The mount points strictly below ``directory`` (an absolute path without links),
    read-write or read-only, as paths relative to it, parents before children, each
    once. Lines that do not parse are skipped."""
    top = directory.rstrip("/") + "/"
    found: list[str] = []
    for line in mountinfo.splitlines():
        fields = line.split(" ")
        if len(fields) < 5:
            continue
        point = unescape(fields[4])
        if not point.startswith(top):
            continue
        relative = point[len(top) :].rstrip("/")
        if relative and relative not in found:
            found.append(relative)
    return sorted(found, key=lambda p: (p.count("/"), p))
