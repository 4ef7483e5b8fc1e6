"""A file system mounted below a folder, as an admin mounts an NFS dataset (root only).

Used by the tests that show a read-only folder stays read-only all the way down
(tests/integration/test_folder_submounts.py, tests/hub/test_shared_folders.py) and
that the notebook's root-owned folder keeps what is below it out
(tests/server/test_workdir.py).
"""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def tmpfs_at(directory: Path, file: str, text: str) -> Iterator[Path]:
    """A tmpfs writable by all mounted on ``directory`` (made here) holding ``file``
    with ``text``; unmounted at the end, with what was written to it."""
    directory.mkdir()
    subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "mode=1777", "jc-test", str(directory)], check=True
    )
    try:
        (directory / file).write_text(text)
        yield directory
    finally:
        subprocess.run(["umount", str(directory)], check=True)


def read_then_try_writes(folder: str, below: str, *files: str) -> str:
    """A shell script, run as work from its home, that prints ``files`` (paths under
    ``folder``), then whether a new file could be written in ``folder/below`` and in
    ``folder`` (``below: written`` or ``below: refused``, then ``top: …``)."""
    read = " ".join(f"{folder}/{f}" for f in files)
    return (
        f"cat {read}; "
        f"touch {folder}/{below}/new 2>/dev/null && echo below: written || echo below: refused; "
        f"touch {folder}/new 2>/dev/null && echo top: written || echo top: refused"
    )
