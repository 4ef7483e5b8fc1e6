"""The browser scripts' network of their own (``tests/support/browser_network.py``).

A command wrapped by ``own_network`` sees no interface but its loopback, so none of
the interfaces Docker adds and removes on the host, yet reaches a server on the
host's 127.0.0.1 at the same URL, request and answer both ways, a large answer and a
request body included; a port it was not given is not reached; another user of the
host cannot use the forwarder's socket; and the sockets are gone afterwards. Needs
root (``unshare --net``), as CI runs the suite.
"""

from __future__ import annotations

import http.server
import os
import pwd
import subprocess
import sys
import threading
import time
from collections.abc import Iterator

import pytest

from tests.support.browser_network import own_network, ports_of
from tests.support.processes import free_port

BIG = b"x" * 3_000_000

#: Run inside: the interfaces it sees, then a GET and a POST to the URL in argv[1],
#: then a GET to argv[2] (a port it was not given), which must fail.
INSIDE = """
import sys, urllib.request
names = [line.split(":")[0].strip() for line in open("/proc/self/net/dev").readlines()[2:]]
print("interfaces", ",".join(sorted(names)))
print("get", len(urllib.request.urlopen(sys.argv[1] + "big", timeout=20).read()))
posted = urllib.request.urlopen(sys.argv[1] + "echo", data=b"ping" * 1000, timeout=20).read()
print("post", posted == b"ping" * 1000)
try:
    urllib.request.urlopen(sys.argv[2], timeout=5)
    print("other reached")
except OSError as exc:
    print("other refused", type(exc).__name__)
"""


class _Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", str(len(BIG)))
        self.end_headers()
        self.wfile.write(BIG)

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def _connect_as_nobody(path: str) -> str:
    """What ``nobody`` meets connecting to the Unix socket ``path``: "connected" or
    the error's name."""
    nobody = pwd.getpwnam("nobody")
    code = (
        "import socket, sys\n"
        "s = socket.socket(socket.AF_UNIX)\n"
        "try:\n    s.connect(sys.argv[1]); print('connected')\n"
        "except OSError as exc:\n    print(type(exc).__name__)\n"
    )
    ids = [f"--reuid={nobody.pw_uid}", f"--regid={nobody.pw_gid}", "--clear-groups"]
    argv = ["setpriv", *ids, "--", sys.executable, "-c", code, path]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=True)
    return done.stdout.strip()


@pytest.fixture
def server() -> Iterator[str]:
    """An HTTP server on the host's 127.0.0.1; its URL."""
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_a_wrapped_command_sees_only_loopback_and_reaches_the_servers_it_was_given(
    server: str,
) -> None:
    other = f"http://127.0.0.1:{free_port()}/"
    with own_network([sys.executable, "-c", INSIDE, server, other], [server]) as command:
        directory = command[command.index("inside") + 1]
        done = subprocess.run(command, capture_output=True, text=True, timeout=60)
        sock = os.path.join(directory, f"{ports_of([server])[0]}.sock")
        assert os.listdir(directory) == [os.path.basename(sock)]
        # Another user of the host cannot use the forwarder to reach the server.
        assert _connect_as_nobody(sock) == "PermissionError", sock
    assert not os.path.exists(directory)  # the outside forwarder's socket went with it
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "interfaces lo", done.stdout
    assert lines[1] == f"get {len(BIG)}", done.stdout
    assert lines[2] == "post True", done.stdout
    assert lines[3].startswith("other refused"), done.stdout


def test_only_loopback_urls_can_be_given() -> None:
    assert ports_of(["http://127.0.0.1:8888/lab", "http://127.0.0.1:8000/hub/login"]) == [
        8000,
        8888,
    ]
    with pytest.raises(ValueError, match=r"reaches only 127\.0\.0\.1"):
        ports_of(["http://localhost:8888/"])


def test_the_command_does_not_outlive_a_timeout() -> None:
    """A test's timeout kills the inside forwarder; the command it runs goes with it."""
    marker = f"{free_port()}.5"  # a sleep no other process runs
    wrapped = own_network(["sleep", marker], ["http://127.0.0.1:9/"])
    with pytest.raises(subprocess.TimeoutExpired), wrapped as command:
        subprocess.run(command, timeout=2)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        left = subprocess.run(["pgrep", "-x", "-f", f"sleep {marker}"], capture_output=True)
        if left.returncode == 1:  # no such process
            return
        time.sleep(0.1)
    pytest.fail(f"sleep {marker} outlived its wrapper: {left.stdout!r}")
