"""Where a kernel's SSH tunnel puts its Unix sockets: a directory only this user can
enter (a loopback TCP port would be open to every user of the machine), kept across
a re-attach when it is still private, never one that another user could have made."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from jupyter_cluster.reach.ports import socket_place


def mode(path: str) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_a_new_kernel_gets_a_fresh_private_directory() -> None:
    places = [socket_place({}), socket_place({"transport": "tcp", "ip": "127.0.0.1"})]
    try:
        for held, prefix in places:
            assert held.held and os.path.dirname(prefix) == held.path
            assert mode(held.path) == 0o700
            assert os.stat(held.path).st_uid == os.getuid()
        assert places[0][0].path != places[1][0].path
        assert len(f"{places[0][1]}-5") < 100  # fits a Unix socket address
    finally:
        for held, _ in places:
            held.remove()


def test_a_reattach_keeps_a_private_directory_and_remakes_a_missing_one(tmp_path: Path) -> None:
    kept = tmp_path / "kept"
    kept.mkdir(mode=0o700)
    previous = {"transport": "ipc", "ip": str(kept / "kernel")}
    held, prefix = socket_place(previous)
    assert (held.path, prefix) == (str(kept), str(kept / "kernel")) and held.held
    held.remove()
    held, prefix = socket_place(previous)
    assert prefix == str(kept / "kernel") and mode(str(kept)) == 0o700
    held.remove()


def test_a_directory_others_can_enter_is_not_reused(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o755)
    held, prefix = socket_place({"transport": "ipc", "ip": str(shared / "kernel")})
    try:
        assert os.path.dirname(prefix) == held.path != str(shared) and mode(held.path) == 0o700
    finally:
        held.remove()
