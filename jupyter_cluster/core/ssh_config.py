"""Every SSH client configuration jupyter-cluster writes, rendered in one place.

Pure text: no keys are made here (that is :mod:`jupyter_cluster.engine.launch.keys`).

- Inside each container (written by :mod:`jupyter_cluster.runtime.files`):
  :func:`client_config` and :func:`known_hosts`, so ``ssh sub1`` works with no
  flags and strict host-key checking.
- On the server, for terminals into sub containers (written by
  :mod:`jupyter_cluster.server.terminals`): :func:`proxy_config` and
  :func:`proxy_known_hosts` reach main1 on its published port and jump from there.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Iterable, Mapping

from .naming import SSH_PORT, WORK_USER

#: The name main1 goes by in the server-side configuration (its host key's alias).
MAIN_ALIAS = "jc-main1"
#: Options of every client configuration: the session key only, strict host keys.
_STRICT = (
    "    IdentitiesOnly yes\n"
    "    StrictHostKeyChecking yes\n"
    "    CheckHostIP no\n"
    "    LogLevel ERROR\n"
)


def _host_key(material: Mapping[str, str], host: str) -> str:
    """``<type> <base64>`` of ``host``'s public host key (no comment)."""
    return " ".join(material[f"host:{host}.pub"].split()[:2])


def known_hosts(material: Mapping[str, str], hosts: Iterable[str], port: int) -> str:
    """``known_hosts`` lines for every host of the session on ``port``."""
    return "".join(f"[{host}]:{port} {_host_key(material, host)}\n" for host in hosts)


def client_config(hosts: Iterable[str], port: int) -> str:
    """A container's ``~/.ssh/config``: ``ssh sub1`` needs no flags, checking is strict."""
    return (
        f"Host {' '.join(hosts)}\n"
        f"    Port {port}\n"
        f"    User {WORK_USER}\n"
        "    IdentityFile ~/.ssh/id_cluster\n"
        "    UserKnownHostsFile ~/.ssh/known_hosts\n" + _STRICT
    )


def _quote(path: str) -> str:
    """A path as ssh_config wants it (double quotes keep blanks)."""
    return '"' + path.replace('"', '\\"') + '"'


def proxy_config(key_dir: str, address: str, port: int, subs: list[str], ssh: str) -> str:
    """The server's ssh_config: main1 on its published port, the subs through it.

    ``key_dir`` holds ``id_cluster``, ``known_hosts`` (:func:`proxy_known_hosts`)
    and this file as ``config``; ``ssh`` is the client's path (for ProxyCommand).
    """
    config = os.path.join(key_dir, "config")
    proxy = f"{shlex.quote(ssh)} -F {shlex.quote(config)} -W %h:%p {MAIN_ALIAS}"
    return (
        f"Host {MAIN_ALIAS}\n"
        f"    HostName {address}\n"
        f"    Port {port}\n"
        f"    HostKeyAlias {MAIN_ALIAS}\n"
        f"Host {' '.join(subs) or 'sub1'}\n"
        f"    Port {SSH_PORT}\n"
        f"    ProxyCommand {proxy}\n"
        "Host *\n"
        f"    User {WORK_USER}\n"
        f"    IdentityFile {_quote(os.path.join(key_dir, 'id_cluster'))}\n"
        f"    UserKnownHostsFile {_quote(os.path.join(key_dir, 'known_hosts'))}\n"
        "    GlobalKnownHostsFile /dev/null\n"
        "    BatchMode yes\n"
        "    ServerAliveInterval 30\n"
        # A terminal must not open forwards from the server's side (~C -R …).
        "    EscapeChar none\n"
        "    ClearAllForwardings yes\n"
        "    ForwardAgent no\n"
        "    PermitLocalCommand no\n" + _STRICT
    )


def proxy_known_hosts(material: Mapping[str, str], subs: Iterable[str]) -> str:
    """The server's known_hosts: main1 under :data:`MAIN_ALIAS`, each sub on port 2200."""
    return f"{MAIN_ALIAS} {_host_key(material, 'main1')}\n" + known_hosts(material, subs, SSH_PORT)
