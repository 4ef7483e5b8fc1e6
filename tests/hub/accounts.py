"""The hub tests' Unix accounts: the example's record of them, and their passwords.

The team example never takes over an existing Unix account: it accepts one only if
its record of the accounts it made (``JUPYTER_CLUSTER_HUB_USERS_FILE``) names it.
Each test session has a fresh state directory, but the accounts outlive it, so the
tests give the example one record shared by every session on the machine,
:data:`MADE_USERS` (root's only): the first session creates and records ``alice``,
``bob`` and ``clusteradmin``, later ones find them recorded.

Users log in with their own Unix passwords (PAM). Like the example's administrator
after its first start, :func:`set_passwords` sets them with ``chpasswd``: random
ones, kept in :data:`PASSWORDS` (root's only) so that concurrent sessions agree.
"""

from __future__ import annotations

import fcntl
import json
import os
import secrets
import subprocess
from pathlib import Path

#: Root's own directory of the hub tests' records (kept across sessions, like accounts).
STATE_DIR = Path("/var/lib/jupyter-cluster-tests")
MADE_USERS = STATE_DIR / "hub-unix-users"
PASSWORDS = STATE_DIR / "hub-passwords.json"


def set_passwords(users: list[str]) -> dict[str, str]:
    """Give each of ``users`` (existing Unix users) its password, made once and kept in
    :data:`PASSWORDS`; returns them."""
    STATE_DIR.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd = os.open(PASSWORDS, os.O_RDWR | os.O_CREAT, 0o600)
    with os.fdopen(fd, "r+") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        text = f.read()
        passwords: dict[str, str] = json.loads(text) if text.strip() else {}
        for user in users:
            passwords.setdefault(user, secrets.token_urlsafe(18))
        f.seek(0)
        f.truncate()
        f.write(json.dumps(passwords))
        lines = "".join(f"{user}:{passwords[user]}\n" for user in users)
        subprocess.run(["chpasswd"], input=lines, text=True, check=True, capture_output=True)
    return {user: passwords[user] for user in users}
