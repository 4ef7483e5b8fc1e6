"""Where a kernel's SSH tunnel puts its Unix sockets: a directory only this user can
enter (a loopback TCP port would be open to every user of the machine), kept across
a re-attach when it is still private, never one that another user could have made."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from jupyter_cluster.reach.ports import socket_prefix


def mode(path: str) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_a_new_kernel_gets_a_fresh_private_directory() -> None:
    first, second = socket_prefix({}), socket_prefix({"transport": "tcp", "ip": "127.0.0.1"})
    try:
        for prefix in (first, second):
            assert mode(os.path.dirname(prefix)) == 0o700
            assert os.stat(os.path.dirname(prefix)).st_uid == os.getuid()
        assert os.path.dirname(first) != os.path.dirname(second)
        assert len(f"{first}-5") < 100  # fits a Unix socket address
    finally:
        for prefix in (first, second):
            os.rmdir(os.path.dirname(prefix))


def test_a_reattach_keeps_a_private_directory_and_remakes_a_missing_one(tmp_path: Path) -> None:
    kept = tmp_path / "kept"
    kept.mkdir(mode=0o700)
    previous = {"transport": "ipc", "ip": str(kept / "kernel")}
    assert socket_prefix(previous) == str(kept / "kernel")
    kept.rmdir()
    assert socket_prefix(previous) == str(kept / "kernel") and mode(str(kept)) == 0o700


def test_a_directory_others_can_enter_is_not_reused(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o755)
    prefix = socket_prefix({"transport": "ipc", "ip": str(shared / "kernel")})
    try:
        assert os.path.dirname(prefix) != str(shared) and mode(os.path.dirname(prefix)) == 0o700
    finally:
        os.rmdir(os.path.dirname(prefix))
