"""Reading a Linux mount table (``/proc/self/mountinfo``): what is mounted writable
below a directory.

Docker engines before 25 make a read-only bind mount read-only at its top only: a
file system mounted below the folder (an NFS dataset an administrator mounted into a
shared data folder, say) stays writable in the container. The engine reads its own
mount table with :func:`writable_below` and binds each of those read-only over
itself (:mod:`jupyter_cluster.engine.folder_submounts`). Pure: given the table's
text.
"""

from __future__ import annotations

import re

#: How the kernel escapes a space, tab, newline or backslash in a mount point.
_ESCAPED = re.compile(r"\\([0-7]{3})")


def unescape(field: str) -> str:
    """A mount point as the file system has it (``\\040`` is a space)."""
    return _ESCAPED.sub(lambda m: chr(int(m.group(1), 8)), field)


def writable_below(mountinfo: str, directory: str) -> list[str]:
    """The mount points strictly below ``directory`` (an absolute path without links)
    that are mounted read-write, as paths relative to it, parents before children,
    each once. Lines that do not parse are skipped."""
    top = directory.rstrip("/") + "/"
    found: list[str] = []
    for line in mountinfo.splitlines():
        fields = line.split(" ")
        if len(fields) < 6:
            continue
        point, options = unescape(fields[4]), fields[5].split(",")
        if "ro" in options or not point.startswith(top) or len(point) == len(top):
            continue
        relative = point[len(top) :].rstrip("/")
        if relative and relative not in found:
            found.append(relative)
    return sorted(found, key=lambda p: (p.count("/"), p))
