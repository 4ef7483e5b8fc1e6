"""What this machine's OpenSSH client needs to reach a session: a config file and known hosts.

Pure: :func:`client_files` turns a session's :class:`~jupyter_cluster.core.access.Access`
(main1's endpoint, the user key, every container's public host key) into the text of
an ``ssh_config`` in which each container is a ``Host`` (``main1`` directly, the
others through it with ``ProxyJump``), and of the known-hosts file those entries
check host keys against (``HostKeyAlias``: strictly, no key ever accepted blindly).
``jupyter cluster ssh`` and ``port-forward`` (:mod:`jupyter_cluster.cli.ssh_commands`)
write them to a private directory for the one ``ssh`` they run.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass

from ..errors import InvalidRequest
from .access import Access
from .apps import parse_port
from .naming import MAIN_HOST, SSH_PORT, WORK_USER

#: What a container's name looks like (main1, sub1, sub2…).
HOST_RE = re.compile(r"(main|sub)[0-9]+")


@dataclass(frozen=True)
class ClientFiles:
    """The texts to write: the private key, the known hosts, the ssh config."""

    key: str
    known_hosts: str
    config: str


def _host_keys(access: Access) -> dict[str, str]:
    """Host name -> its public host key, from the access's key material."""
    found = {}
    for name, value in access.keys.items():
        if name.startswith("host:") and name.endswith(".pub"):
            found[name[len("host:") : -len(".pub")]] = value.strip()
    return found


def _quoted(path: str) -> str:
    """A path as ssh_config reads it (double-quoted; it may hold spaces)."""
    return '"' + path.replace("\\", "\\\\").replace('"', '\\"') + '"'


def client_files(access: Access, key_path: str, known_hosts_path: str) -> ClientFiles:
    """The files for ``access``; ``key_path`` and ``known_hosts_path`` are where the
    caller writes the key and the known hosts (the config names them)."""
    hosts = _host_keys(access)
    if MAIN_HOST not in hosts or "user" not in access.keys:
        raise InvalidRequest("the session has no SSH keys yet; is it running?", "session")
    common = [
        f"    User {WORK_USER}",
        f"    IdentityFile {_quoted(key_path)}",
        "    IdentitiesOnly yes",
        "    IdentityAgent none",
        "    BatchMode yes",
        f"    UserKnownHostsFile {_quoted(known_hosts_path)}",
        "    GlobalKnownHostsFile /dev/null",
        "    StrictHostKeyChecking yes",
        "    UpdateHostKeys no",
        "    ServerAliveInterval 15",
    ]
    lines = [f"Host {MAIN_HOST}", f"    HostName {access.address}", f"    Port {access.port}"]
    lines += [f"    HostKeyAlias {MAIN_HOST}", *common]
    for host in sorted(h for h in hosts if h != MAIN_HOST):
        lines += [f"Host {host}", f"    HostName {host}", f"    Port {SSH_PORT}"]
        lines += [f"    HostKeyAlias {host}", f"    ProxyJump {MAIN_HOST}", *common]
    known = "".join(f"{host} {key}\n" for host, key in sorted(hosts.items()))
    key = access.keys["user"]
    return ClientFiles(key if key.endswith("\n") else key + "\n", known, "\n".join(lines) + "\n")


def _in_cluster_order(host: str) -> tuple[bool, int, str]:
    """main1 first, then sub1, sub2 … sub10 by number (not sub1, sub10, sub2)."""
    number = host.removeprefix("sub")
    return host != MAIN_HOST, int(number) if number.isdigit() else 0, host


def check_host(access: Access, host: str) -> str:
    """``host`` if the session has such a container; InvalidRequest naming them else."""
    hosts = sorted(_host_keys(access), key=_in_cluster_order)
    if host not in hosts:
        raise InvalidRequest(
            f"host: the session has no container {host!r}; its containers: {', '.join(hosts)}",
            "host",
        )
    return host


def split_target(words: Sequence[str]) -> tuple[str, list[str]]:
    """``[HOST] [--] [COMMAND…]`` of ``ssh`` and ``exec`` (argparse drops a ``--`` that
    comes first): a first word followed by ``--`` is the host even when it names no
    container (so a mistyped host is refused as unknown, not run as a command), as is
    a first word that names one (``main1``, ``sub2``…); else the words are a command
    for main1."""
    rest = list(words)
    if rest[1:2] == ["--"]:
        return rest[0], rest[2:]
    host = MAIN_HOST
    if rest and HOST_RE.fullmatch(rest[0]):
        host, rest = rest[0], rest[1:]
    return host, rest[1:] if rest[:1] == ["--"] else rest


def shell_words(command: Sequence[str]) -> list[str]:
    """What ``exec`` runs for ``command``: one word is a command line for the
    container's shell (``sh -c``), as ``ssh`` and pdsh take one (``-- 'ls | wc -l'``,
    ``--all -- 'echo $BACKENDAI_CLUSTER_HOST'``); several words are a program and its
    arguments, run as they are. A blank command line is refused: ``sh -c ''`` ran
    nothing and said 0."""
    if len(command) == 1 and not command[0].strip():
        raise InvalidRequest("give a command to run, e.g. -- hostname", "cmd")
    return ["sh", "-c", command[0]] if len(command) == 1 else list(command)


def parse_forward(text: str) -> tuple[int, int]:
    """``PORT[:LOCAL]`` of ``port-forward``: (port in main1, port on this machine)."""
    remote, _, local = text.partition(":")
    port = parse_port(remote, "port")
    return port, parse_port(local, "local port") if local else port


def ssh_argv(config_path: str, host: str, command: Sequence[str]) -> list[str]:
    """``ssh`` with only the session's config: a login shell, or ``command``. One word
    is a command line for the remote shell, as OpenSSH takes it (``-- 'nvidia-smi |
    head'``); several are quoted each (ssh hands the remote shell one line), so the
    words stay words (``-- ls -l "my file"``)."""
    line = command[0] if len(command) == 1 else shlex.join(command)
    return ["ssh", "-F", config_path, "--", host, *([line] if command else [])]


def forward_argv(config_path: str, port: int, local: int) -> list[str]:
    """``ssh`` forwarding 127.0.0.1:``local`` here to 127.0.0.1:``port`` in main1."""
    spec = f"127.0.0.1:{local}:127.0.0.1:{port}"
    return ["ssh", "-F", config_path, "-N", "-o", "ExitOnForwardFailure=yes", "-L", spec, MAIN_HOST]
