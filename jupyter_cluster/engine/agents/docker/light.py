"""A small, standard-library-only reader of a local Docker engine's API.

The CLI's read-only commands (``ls``, ``show``, ``agents``; see
:mod:`jupyter_cluster.cli.quick`) start a fresh Python each time, and the Docker client
the engine uses (aiodocker over aiohttp) takes longer to import than the whole
answer should. This reader asks a Docker engine on a Unix socket in plain
HTTP/1.0 over :mod:`socket` (:mod:`http.client` alone imports the e-mail parser and
ssl), GET only: the containers and networks
carrying a label, and ``docker info``. It never changes anything: whatever it finds
that needs action is left to the engine's own reconciliation.

Only Unix sockets are spoken: agents over TLS or SSH are read by the engine itself
(:func:`socket_path` says None for them).
"""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Iterator, Mapping
from typing import Any

from .frames import take_frames

#: Where the Docker engine listens when neither the agent's url nor DOCKER_HOST says.
DEFAULT_SOCKETS = ("/var/run/docker.sock", "/run/docker.sock")


class LightDockerError(Exception):
    """The engine could not be reached, or answered with an error (the caller falls
    back to the engine's own client, which reports it properly)."""


def socket_path(url: str) -> str | None:
    """The Unix socket of an agent's ``url`` ("" is the local engine: ``DOCKER_HOST``,
    read now, else the default socket); None when it is not a Unix socket."""
    url = url or os.environ.get("DOCKER_HOST", "")
    if not url:
        return next((p for p in DEFAULT_SOCKETS if os.path.exists(p)), None)
    if url.startswith("unix://"):
        return url[len("unix://") :] or None
    return None


class LightDocker:
    """GET requests to the Docker engine on the Unix socket ``path``, in HTTP/1.0 (the
    answer is the rest of the stream: no chunks to decode), one connection each.

    Made by :mod:`jupyter_cluster.cli.quick`, one per local agent; ``timeout`` bounds
    each request (connecting, and every read).
    """

    def __init__(self, path: str, timeout: float = 5.0) -> None:
        self.path = path
        self.timeout = timeout

    def get(self, path: str, query: Mapping[str, str] | None = None) -> Any:
        """The decoded JSON answer to ``GET path?query``; LightDockerError otherwise."""
        body = b"".join(self.stream(path, query))
        try:
            return json.loads(body)
        except ValueError:
            raise LightDockerError(f"GET {path}: not JSON") from None

    def stream(self, path: str, query: Mapping[str, str] | None = None) -> Iterator[bytes]:
        """The body of ``GET path?query`` as it arrives (pieces of up to 256 KiB);
        LightDockerError when the engine cannot be reached or answers an error."""
        if query:
            path += "?" + "&".join(f"{k}={_quote(v)}" for k, v in query.items())
        request = f"GET {path} HTTP/1.0\r\nHost: docker\r\nAccept: application/json\r\n\r\n"
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                sock.settimeout(self.timeout)
                sock.connect(self.path)
                sock.sendall(request.encode("ascii"))
                head = b""
                while b"\r\n\r\n" not in head:
                    piece = sock.recv(1 << 16)
                    if not piece:
                        break
                    head += piece
                head, _, body = head.partition(b"\r\n\r\n")
                words = head.split(b"\r\n", 1)[0].split()
                status = int(words[1]) if len(words) > 1 and words[1].isdigit() else 0
                if not 200 <= status < 300:
                    while piece := sock.recv(1 << 16):
                        body += piece
                    raise LightDockerError(f"GET {path}: {status} {body[:200]!r}")
                if body:
                    yield body
                while piece := sock.recv(1 << 18):
                    yield piece
        except OSError as exc:
            raise LightDockerError(f"GET {path}: {exc}") from None

    def containers(self, labels: Mapping[str, str]) -> list[dict[str, Any]]:
        """Containers, running or not, carrying all of ``labels`` (``docker ps -a``'s rows)."""
        return list(self.get("/containers/json", {"all": "1", "filters": _filter(labels)}))

    def networks(self, labels: Mapping[str, str]) -> list[dict[str, Any]]:
        """Networks carrying all of ``labels``."""
        return list(self.get("/networks", {"filters": _filter(labels)}))

    def info(self) -> dict[str, Any]:
        """The engine's ``docker info``."""
        return dict(self.get("/info"))

    def close(self) -> None:
        """Nothing to close: each request has its own connection (kept for callers)."""


def log_payload(pieces: Iterator[bytes], tty: bool) -> Iterator[bytes]:
    """The bytes of a ``logs`` answer without Docker's framing: without a TTY every
    piece of output comes as an 8-byte header (stream, length) and its bytes. Taken
    apart a read at a time, as :func:`~.logs.log_text` does for the engine."""
    if tty:
        yield from pieces
        return
    pending = bytearray()
    for data in pieces:
        pending += data
        payload = take_frames(pending)
        if payload:
            yield payload


def _quote(text: str) -> str:
    """``text`` percent-encoded for a query string (urllib.parse costs an import)."""
    return "".join(chr(b) if chr(b) in _SAFE else f"%{b:02X}" for b in text.encode("utf-8"))


_SAFE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")


def _filter(labels: Mapping[str, str]) -> str:
    return json.dumps({"label": [f"{k}={v}" for k, v in labels.items()]})
