"""The per-container files of a session: start-up script, SSH setup, env, hostfile.

Called by the manager right after creating each container (before starting it);
the result goes to :meth:`Agent.put_files`. Nothing here is baked into images, so
any image with python3, ipykernel and OpenSSH works.
"""

from __future__ import annotations

from importlib.resources import files as package_files

from ..core import naming
from ..core import ssh_config as ssh
from ..core.models import Container, Session
from ..engine.agents.base import FileEntry

_HOME = naming.WORK_HOME
_RT = naming.RUNTIME_DIR
#: Login shells (terminals, an interactive ``ssh``) source it after /etc/profile,
#: which resets PATH, to have the container's PATH back (see profile.sh).
PROFILE_SCRIPT = "/etc/profile.d/jupyter-cluster.sh"


def _resource(name: str) -> bytes:
    return package_files(__package__).joinpath(name).read_bytes()


def fresh_container_files(uid: int = naming.WORK_UID) -> list[FileEntry]:
    """What only a container created for the session gets (not a warm one, whose
    start-up script already reads its log FIFO): work's run folder and that FIFO,
    so a kernel started in main1 the moment it runs finds them, rather than waiting
    for the start-up script to make them (20-40 ms)."""
    return [
        FileEntry(naming.RUN_DIR, b"", 0o755, uid, uid, directory=True),
        FileEntry(naming.LOG_FIFO, b"", 0o600, uid, uid, fifo=True),
    ]


def container_files(
    session: Session, container: Container, keys: dict[str, str], uid: int = naming.WORK_UID
) -> list[FileEntry]:
    """Everything one container needs, with owners and modes (private keys 0600);
    ``uid``: user work's (``ContainerHardening.work_uid``). The keys sshd accepts
    are root's file, so code running as work cannot let anyone else in."""
    UID = uid  # read as the constant it is within one container
    host = container.host
    port = naming.SSH_PORT
    entries = [
        FileEntry(_RT, b"", 0o755, directory=True),
        FileEntry(f"{_RT}/start.sh", _resource("start.sh"), 0o755),
        FileEntry(f"{_RT}/sshd_config", _resource("sshd_config"), 0o644),
        # sshd's log reaches start.sh through this FIFO; its privilege-separation
        # folder must be root's and not writable by others, whatever the image has.
        FileEntry(f"{_RT}/sshd.fifo", b"", 0o600, fifo=True),
        FileEntry("/run/sshd", b"", 0o755, directory=True),
        FileEntry(f"{_RT}/ssh_host_ed25519_key", keys[f"host:{host}"].encode(), 0o600),
        FileEntry(f"{_RT}/ssh_host_ed25519_key.pub", (keys[f"host:{host}.pub"] + "\n").encode()),
        FileEntry(f"{_RT}/authorized_keys", (keys["user.pub"] + "\n").encode(), 0o644),
        FileEntry(naming.WORK_UID_FILE, f"{uid}\n".encode(), 0o644),
        FileEntry("/home/config", b"", 0o755, directory=True),
        FileEntry(naming.HOSTFILE_PATH, naming.hostfile(session).encode(), 0o644),
        FileEntry(naming.BACKENDAI_SSH_DIR, b"", 0o700, UID, UID, directory=True),
        FileEntry(f"{naming.BACKENDAI_SSH_DIR}/id_cluster", keys["user"].encode(), 0o600, UID, UID),
        FileEntry(
            f"{naming.BACKENDAI_SSH_DIR}/id_cluster.pub",
            (keys["user.pub"] + "\n").encode(),
            0o644,
            UID,
            UID,
        ),
        FileEntry(_HOME, b"", 0o755, UID, UID, directory=True),
        FileEntry(f"{_HOME}/.ssh", b"", 0o700, UID, UID, directory=True),
        FileEntry(f"{_HOME}/.ssh/id_cluster", keys["user"].encode(), 0o600, UID, UID),
        FileEntry(
            f"{_HOME}/.ssh/id_cluster.pub", (keys["user.pub"] + "\n").encode(), 0o644, UID, UID
        ),
        FileEntry(
            f"{_HOME}/.ssh/config", ssh.client_config(session.hosts, port).encode(), 0o600, UID, UID
        ),
        FileEntry(
            f"{_HOME}/.ssh/known_hosts",
            ssh.known_hosts(keys, session.hosts, port).encode(),
            0o644,
            UID,
            UID,
        ),
        # SSH sessions get the container's environment, the image's included (its
        # PATH, LD_LIBRARY_PATH…), which only the start-up script sees: it writes it
        # into this file of its own folder, work's (0600: launch variables may be
        # secrets), and ~/.ssh/environment points there, so root never writes in a
        # folder of work's.
        FileEntry(naming.SSH_ENVIRONMENT, b"", 0o600, UID, UID),
        FileEntry(f"{_HOME}/.ssh/environment", b"", 0o777, UID, UID, link=naming.SSH_ENVIRONMENT),
        FileEntry(PROFILE_SCRIPT, _resource("profile.sh"), 0o644),
    ]
    entries += [
        FileEntry(naming.PYTHON_DIR, b"", 0o755, directory=True),
        FileEntry(f"{naming.PYTHON_DIR}/jupyter_cluster", b"", 0o755, directory=True),
        FileEntry(f"{naming.PYTHON_DIR}/jupyter_cluster/__init__.py", _resource("incluster.py")),
    ]
    if session.spec.bootstrap:
        script = session.spec.bootstrap + "\n"
        entries.append(FileEntry(f"{_RT}/bootstrap.sh", script.encode(), 0o755))
    return entries
