"""Command lines of terminals into a session's containers (run by jupyter_server_terminals).

Used by the routes (:mod:`.agent`, :mod:`.ssh`) for the server's terminals:

- :func:`docker_argv`: ``docker exec -it -u work`` a login shell (``docker -H`` for a
  remote agent);
- :func:`ssh_argv`: OpenSSH through main1, as the containers themselves do it (main1's
  SSH port is the only one published): a ProxyCommand jumps via main1's published
  port, with the session's user key and every container's host key, strict
  host-key checking on. The key material is written into a 0700 directory that
  the server removes when the session ends.
"""

from __future__ import annotations

import os
import shutil

from ..core import naming
from ..core.access import Access
from ..core.models import Session
from ..core.ssh_config import MAIN_ALIAS, proxy_config, proxy_known_hosts
from ..engine.agents.base import AgentConfig
from ..errors import AgentError
from ..whole_files import replaced_whole

_LOGIN_SHELL = "if command -v bash >/dev/null 2>&1; then exec bash -l; else exec sh -l; fi"


def _write_private(path: str, text: str) -> None:
    """Put ``text`` at ``path`` (0600) whole, at once: terminals into one session are
    opened concurrently, and an ``ssh`` started for one reads these files while the
    next terminal's call writes them again (truncating in place, it read an empty
    config or key now and then, and its terminal ended at once)."""
    with replaced_whole(path) as f:
        f.write(text)


def ssh_argv(access: Access, session: Session, host: str, key_dir: str) -> list[str]:
    """``ssh`` into ``host`` through main1, writing the key material into ``key_dir``
    first (main1 itself is reached by its alias in the written ssh_config)."""
    ssh = shutil.which("ssh")
    if ssh is None:
        raise AgentError(
            "the OpenSSH client (ssh) is not installed on the server; install "
            "openssh-client to open terminals in sub containers"
        )
    subs = [c.host for c in session.containers if c.role != "main"]
    os.makedirs(os.path.dirname(key_dir), mode=0o700, exist_ok=True)
    os.makedirs(key_dir, mode=0o700, exist_ok=True)
    os.chmod(key_dir, 0o700)
    _write_private(os.path.join(key_dir, "id_cluster"), access.keys["user"])
    _write_private(os.path.join(key_dir, "known_hosts"), proxy_known_hosts(access.keys, subs))
    config = proxy_config(key_dir, access.address, access.port, subs, ssh)
    _write_private(os.path.join(key_dir, "config"), config)
    alias = MAIN_ALIAS if host == "main1" else host
    return [ssh, "-F", os.path.join(key_dir, "config"), "-t", alias]


def docker_argv(
    agent: AgentConfig, session: Session, host: str, term: str, key_dir: str
) -> list[str]:
    """``docker exec -it -u work`` a login shell in ``host``'s container on ``agent``.

    The container's variables go in a 0600 file in ``key_dir``, not on the command
    line, where any local user could read a launch's secrets in ``ps``.
    """
    docker = shutil.which("docker")
    if docker is None:
        raise AgentError("the docker command is not installed on the server")
    container = session.locate(host)
    assert container.container_id
    os.makedirs(os.path.dirname(key_dir), mode=0o700, exist_ok=True)
    os.makedirs(key_dir, mode=0o700, exist_ok=True)
    os.chmod(key_dir, 0o700)
    env_file = os.path.join(key_dir, f"env-{host}")
    env = naming.container_env(session, container)
    _write_private(env_file, "".join(f"{k}={v}\n" for k, v in env.items()))
    return [
        docker,
        *agent.docker_cli_flags(),
        "exec",
        "-it",
        "-u",
        naming.WORK_USER,
        "-w",
        naming.WORK_HOME,
        "--env-file",
        env_file,
        "-e",
        f"TERM={term}",
        container.container_id,
        "/bin/sh",
        "-c",
        _LOGIN_SHELL,
    ]
