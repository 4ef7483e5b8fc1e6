"""Where a user's server may send its Hub token: the shared service's address, checked.

A user's server sends its ``JUPYTERHUB_API_TOKEN`` with every call to the shared
service (:class:`~.http.ServiceHTTP`, which checks the address before each request).
Whoever holds the service's address gets that token, and with it the user's server.
A loopback TCP port is not enough: while the service restarts, any local user may
bind it. So only addresses that nobody but root (or this process's own user) can
take are accepted:

- ``http+unix://<socket path, percent-encoded>/<prefix>/`` (what the team example
  uses): a Unix socket that belongs to root, in directories that belong to root
  and that no one else may write (e.g. ``/run/jupyter-cluster-hub/``, 0755), so
  only root can create it;
- ``https://…``: the service proves who it is with its certificate (verified
  against the system's CAs, or ``SSL_CERT_FILE``);
- ``http://…`` only with ``ClusterManager.service_allow_http`` (a network where
  nobody else can take the address or read the traffic).

Anything else is refused with :class:`~jupyter_cluster.errors.UnsafeSetting`,
saying why, before a byte is sent.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlparse

from ..errors import UnsafeSetting

#: The host name requests carry when they go over a Unix socket.
SOCKET_HOST = "localhost"


@dataclass(frozen=True)
class ServiceAddress:
    """A parsed service URL: the HTTP base URL of requests, and the socket if any."""

    #: What was configured (for messages).
    url: str
    #: The base URL requests are made against (``http://localhost/prefix/`` on a socket).
    base: str
    #: The Unix socket's path, or None for TCP.
    socket: str | None
    #: Whether the transport authenticates the service (socket checked, or TLS).
    secure: bool


def parse(url: str) -> ServiceAddress:
    """Split a service URL (``http+unix://``, ``https://`` or ``http://``) into a
    :class:`ServiceAddress`; called by :class:`~.http.ServiceHTTP` when it is made."""
    parsed = urlparse(url)
    path = parsed.path if parsed.path.endswith("/") else parsed.path + "/"
    if parsed.scheme == "http+unix":
        socket_path = unquote(parsed.netloc)
        return ServiceAddress(url, f"http://{SOCKET_HOST}{path}", socket_path, True)
    return ServiceAddress(url, url.rstrip("/") + "/", None, parsed.scheme == "https")


def _trusted(uid: int) -> bool:
    return uid in (0, os.geteuid())


def _check_directories(path: Path, url: str) -> None:
    """Every directory above ``path`` (as given and as resolved) belongs to root or to
    us, and nobody else may write it: nobody else can put a socket at ``path``."""
    for start in (path, Path(os.path.realpath(path))):
        for directory in start.parents:
            info = os.lstat(directory)
            if stat.S_ISLNK(info.st_mode):
                if not _trusted(info.st_uid):
                    raise UnsafeSetting(
                        f"the cluster service's socket {path} (from {url}) is reached "
                        f"through {directory}, a link owned by uid {info.st_uid}: refusing "
                        "to send this server's token there"
                    )
                continue
            if not _trusted(info.st_uid) or info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
                raise UnsafeSetting(
                    f"the cluster service's socket {path} (from {url}) is in {directory} "
                    f"(owner uid {info.st_uid}, mode {stat.S_IMODE(info.st_mode):o}), which "
                    "someone other than root may write: another user could put a socket "
                    "there and receive this server's token, so it is not sent. The "
                    "socket's directories must belong to root and not be group- or "
                    "world-writable (chown root, chmod go-w)."
                )


def check(address: ServiceAddress, allow_http: bool) -> None:
    """Raise :class:`~jupyter_cluster.errors.UnsafeSetting` unless ``address`` is one
    only the real service can hold (see the module docstring); called before every
    request that carries the token."""
    if address.socket is None:
        if address.secure or allow_http:
            return
        raise UnsafeSetting(
            f"the cluster service's URL {address.url} is plain http: anyone who can take "
            "that address (e.g. a local user binding the port while the service restarts) "
            "would receive this server's token, so it is not sent. Use the service's Unix "
            "socket (http+unix://…, as the team example does) or https; or, on a network "
            "where nobody else can, set c.ClusterManager.service_allow_http = True."
        )
    path = Path(address.socket)
    if not path.is_absolute():
        raise UnsafeSetting(f"the cluster service's socket in {address.url} is not absolute")
    _check_directories(path, address.url)
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return  # nothing listens (the service restarts): connecting will say so
    if not stat.S_ISSOCK(info.st_mode) or not _trusted(info.st_uid):
        raise UnsafeSetting(
            f"{path} (the cluster service's socket, from {address.url}) is not a socket "
            f"of root's (owner uid {info.st_uid}): refusing to send this server's token"
        )
