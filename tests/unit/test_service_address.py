"""A user's server sends its Hub token only where nobody else can be listening.

The client (:class:`jupyter_cluster.client.http.ServiceHTTP`) refuses, before
connecting, a plain http URL and a Unix socket that someone other than root (or
this process's user) could have put there; real listeners show that nothing, not
even a connection, reaches them. The service (``serve``) refuses to listen on such
a socket, and listens on a good one connectable by everyone.
"""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest

from jupyter_cluster.client.http import ServiceHTTP
from jupyter_cluster.errors import UnsafeSetting
from jupyter_cluster.server.serve import listen_config


class Listener(threading.Thread):
    """Accepts connections on ``sock`` and keeps the first bytes of each."""

    def __init__(self, sock: socket.socket) -> None:
        super().__init__(daemon=True)
        self.sock = sock
        self.received: list[bytes] = []
        sock.listen(8)
        sock.settimeout(0.2)
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            conn.settimeout(2)
            try:
                self.received.append(conn.recv(65536))
                body = b'{"fields": []}'
                conn.sendall(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
                    + str(len(body)).encode()
                    + b"\r\nConnection: close\r\n\r\n"
                    + body
                )
            except OSError:
                pass
            conn.close()

    def close(self) -> None:
        self.stop.set()
        self.join(5)
        self.sock.close()


@pytest.fixture
def private_dir() -> Iterator[Path]:
    """A directory whose every ancestor is root's or ours and not writable by others
    (under the home directory: /tmp is world-writable)."""
    path = Path(tempfile.mkdtemp(prefix=".jc-test-", dir=Path.home()))
    path.chmod(0o755)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def unix_listener(path: Path) -> Listener:
    """A listener on the Unix socket ``path``."""
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(path))
    listener = Listener(sock)
    listener.start()
    return listener


def socket_url(path: Path) -> str:
    return f"http+unix://{quote(str(path), safe='')}/services/cluster/"


def test_plain_http_gets_no_token_unless_allowed() -> None:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    listener = Listener(sock)
    listener.start()
    url = f"http://127.0.0.1:{sock.getsockname()[1]}/services/cluster/"
    try:
        with pytest.raises(UnsafeSetting, match="plain http"):
            ServiceHTTP(url, "secret-token", 5).call_sync("GET", "launch-options")
        assert listener.received == []
        # allowed on purpose: it goes there
        assert ServiceHTTP(url, "secret-token", 5, allow_http=True).call_sync(
            "GET", "launch-options"
        ) == {"fields": []}
        assert b"Authorization: token secret-token" in listener.received[0]
    finally:
        listener.close()


def test_a_socket_in_a_directory_others_may_write_gets_no_token(private_dir: Path) -> None:
    open_dir = private_dir / "open"
    open_dir.mkdir()
    open_dir.chmod(0o777)
    listener = unix_listener(open_dir / "cluster.sock")
    try:
        with pytest.raises(UnsafeSetting, match="someone other than root may write"):
            ServiceHTTP(socket_url(open_dir / "cluster.sock"), "secret-token", 5).call_sync(
                "GET", "launch-options"
            )
        assert listener.received == []
    finally:
        listener.close()


def test_a_socket_of_another_user_gets_no_token(private_dir: Path) -> None:
    if os.geteuid() != 0:
        if os.environ.get("CI"):  # CI runs as root: never hide this test there
            pytest.fail("CI must run this test as root")
        pytest.skip("needs root, to make a socket owned by someone else")
    path = private_dir / "cluster.sock"
    listener = unix_listener(path)
    os.chown(path, 65534, 65534)  # nobody's
    try:
        with pytest.raises(UnsafeSetting, match="not a socket of root's"):
            ServiceHTTP(socket_url(path), "secret-token", 5).call_sync("GET", "launch-options")
        assert listener.received == []
    finally:
        listener.close()


def test_a_safe_socket_gets_the_request(private_dir: Path) -> None:
    path = private_dir / "cluster.sock"
    listener = unix_listener(path)
    try:
        http = ServiceHTTP(socket_url(path), "secret-token", 5)
        assert http.call_sync("GET", "launch-options") == {"fields": []}
        head = listener.received[0]
        assert head.startswith(b"GET /services/cluster/cluster/api/launch-options ")
        assert b"Authorization: token secret-token" in head
    finally:
        listener.close()


def test_the_service_listens_only_on_a_safe_socket(private_dir: Path) -> None:
    path = private_dir / "cluster.sock"
    # JupyterHub gives a service without a url a dummy one: the socket wins
    dummy = {"JUPYTERHUB_SERVICE_URL": "http://127.0.0.1:0/"}
    listen = listen_config({**dummy, "JUPYTER_CLUSTER_SERVE_URL": socket_url(path)})
    assert listen == {"sock": str(path), "sock_mode": "0666", "base_url": "/services/cluster/"}
    open_dir = private_dir / "open"
    open_dir.mkdir()
    open_dir.chmod(0o777)
    with pytest.raises(SystemExit, match="someone other than root may write"):
        listen_config({"JUPYTER_CLUSTER_SERVE_URL": socket_url(open_dir / "cluster.sock")})
    # a Hub-routed service still listens where JupyterHub says
    hub = {"JUPYTERHUB_SERVICE_URL": "http://127.0.0.1:10101", "JUPYTERHUB_SERVICE_PREFIX": "/s/"}
    assert listen_config(hub) == {"ip": "127.0.0.1", "port": 10101, "base_url": "/s/"}


@pytest.mark.parametrize("port", ["99999", "http", "-1"])
def test_a_service_url_with_a_bad_port_says_so(port: str) -> None:
    """It ended in urllib's traceback (``Port out of range 0-65535``)."""
    url = f"http://127.0.0.1:{port}/"
    with pytest.raises(SystemExit) as caught:
        listen_config({"JUPYTERHUB_SERVICE_URL": url})
    said = str(caught.value)
    assert said.startswith(f"jupyter cluster serve: the service's URL {url!r} has no valid port")
    assert said.endswith("give one from 1 to 65535"), said
