"""The key material of terminals into a session's containers (jupyter_cluster.reach.terminal).

The Lab's "Terminals" button opens a terminal in every container at once: the
server writes the session's ssh files for each, while the ``ssh`` of the one
before is already reading them. A reader must always find them whole.
"""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

from jupyter_cluster.core.access import Access
from jupyter_cluster.reach.terminal import ssh_argv

from .support import new_session

KEYS = {
    "user": "-----BEGIN OPENSSH PRIVATE KEY-----\nabc\n-----END OPENSSH PRIVATE KEY-----",
    "user.pub": "ssh-ed25519 AAAAuser",
    "host:main1.pub": "ssh-ed25519 AAAAmain",
    "host:sub1.pub": "ssh-ed25519 AAAAsub1",
}
ACCESS = Access("10.0.0.5", 32001, KEYS)
FILES = ("config", "id_cluster", "known_hosts")


def test_the_files_are_private_and_the_command_uses_them(tmp_path: Path) -> None:
    key_dir = tmp_path / "ssh" / "s1"
    argv = ssh_argv(ACCESS, new_session(2), "sub1", str(key_dir))
    assert argv[1:] == ["-F", str(key_dir / "config"), "-t", "sub1"]
    assert stat.S_IMODE(key_dir.stat().st_mode) == 0o700
    for name in FILES:
        assert stat.S_IMODE((key_dir / name).stat().st_mode) == 0o600, name
    assert (key_dir / "id_cluster").read_text() == KEYS["user"]
    assert sorted(os.listdir(key_dir)) == sorted(FILES)  # no temporary file left


def test_a_reader_finds_the_files_whole_while_the_next_terminal_writes_them(
    tmp_path: Path,
) -> None:
    key_dir = tmp_path / "s1"
    session = new_session(2)
    ssh_argv(ACCESS, session, "main1", str(key_dir))
    whole = {name: (key_dir / name).read_text() for name in FILES}
    done = threading.Event()
    torn: list[str] = []

    def read() -> None:  # as the first terminal's ssh does
        while not done.is_set():
            for name in FILES:
                if (key_dir / name).read_text() != whole[name]:
                    torn.append(name)

    reader = threading.Thread(target=read)
    reader.start()
    try:
        for _ in range(300):
            ssh_argv(ACCESS, session, "sub1", str(key_dir))
    finally:
        done.set()
        reader.join()
    assert torn == []
