"""``jupyter cluster ssh`` and ``port-forward`` on real Docker and real SSH (#24 item 4).

``ssh`` runs a command in main1 directly and in a sub through it, with the session's
key and every host key checked against the session's own (never accepted blindly),
passes words (and a one-word command line) and exit codes through, and refuses a
container the session lacks. Killed, it leaves its key's private directory, which
the next command removes.
``port-forward`` makes a web server listening on main1's loopback answer at
127.0.0.1 here (nothing is published on the agent for it) until the command gets
SIGINT; it exits 0 and closes the port then, and the same port can be forwarded
again at once. A local port something else listens on is refused before ssh starts.
Neither leaves its key on disk.
"""

from __future__ import annotations

import os
import signal
import socket
import urllib.request
from pathlib import Path

import pytest

from tests.support.constants import CLI, SMALL_FLAGS
from tests.support.docker import docker
from tests.support.waiting import wait_for

from .support import Workspace

pytestmark = pytest.mark.docker


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _key_dirs(tmp: Path) -> list[str]:
    return [p.name for p in tmp.iterdir() if p.name.startswith("jupyter-cluster-ssh-")]


def _ssh_child(pid: int) -> int | None:
    """The ssh client the ``jupyter cluster ssh`` process ``pid`` runs, once it runs."""
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        found = [c for c in children if Path(f"/proc/{c}/comm").read_text().strip() == "ssh"]
    except OSError:
        return None
    return int(found[0]) if found else None


def test_ssh_reaches_every_container_with_the_sessions_keys(ws: Workspace, tmp_path: Path) -> None:
    ws.env["TMPDIR"] = str(tmp_path)  # where the key's private directory goes
    session = ws.launch("--size", "2", *SMALL_FLAGS, "--name", "far")
    assert ws.ok_cli("ssh", "far", "--", "hostname").stdout == "main1\n"
    words = ws.ok_cli("ssh", "far", "sub1", "--", "printf", "[%s]", "a  b", "$HOME")
    assert words.stdout == "[a  b][$HOME]"  # each word stays one, unexpanded
    line = ws.ok_cli("ssh", "far", "sub1", "--", "echo $BACKENDAI_CLUSTER_HOST | tr a-z A-Z")
    assert line.stdout == "SUB1\n"  # one word: a command line, as OpenSSH takes it
    assert ws.cli("ssh", "far", "sub1", "--", "sh", "-c", "exit 7").returncode == 7
    wrong = ws.cli("ssh", "far", "sub5", "--", "true")
    assert wrong.returncode == 2 and "no container 'sub5'" in wrong.stderr
    typo = ws.cli("ssh", "far", "mian1", "--", "true")  # refused, not run in main1
    assert typo.returncode == 2 and "no container 'mian1'" in typo.stderr, str(typo)
    assert _key_dirs(tmp_path) == []  # the key went with the command

    # Killed, no clean-up of its runs: its key's directory stays, until the next
    # command of this user makes one and removes those no live process holds.
    killed = ws.popen(*CLI, "ssh", "far", "--", "sleep", "60")
    wait_for(lambda: _ssh_child(killed.pid) is not None, 30, "the ssh client to start")
    for pid in (killed.pid, _ssh_child(killed.pid)):
        os.kill(pid or killed.pid, signal.SIGKILL)
    killed.communicate(timeout=30)
    (left,) = _key_dirs(tmp_path)
    assert (tmp_path / left / "key").exists()
    assert ws.ok_cli("ssh", "far", "--", "hostname").stdout == "main1\n"
    assert _key_dirs(tmp_path) == []

    ws.exec("far", "main1", "sh", "-c", "echo hello > page.txt")
    server = "nohup python3 -m http.server 8765 --bind 127.0.0.1 >/dev/null 2>&1 &"
    ws.exec("far", "main1", "sh", "-c", server)
    ports = docker("port", f"jc-{session['id'][:12]}-main1").stdout
    assert "8765" not in ports  # reached over SSH only
    local = _free_port()
    forward = ws.popen(*CLI, "port-forward", "far", f"8765:{local}")
    url = f"http://127.0.0.1:{local}/page.txt"

    def answers() -> bool:
        try:
            with urllib.request.urlopen(url, timeout=2) as reply:
                return bool(reply.read() == b"hello\n")
        except OSError:
            return False

    held = socket.socket()  # a client that keeps its connection open, as a browser may
    try:
        wait_for(answers, 30, "the forwarded port to answer")
        held.connect(("127.0.0.1", local))
        held.sendall(b"GET /page.txt HTTP/1.1\r\nHost: x\r\n")  # and never ends it
    finally:
        os.kill(forward.pid, signal.SIGINT)
        try:
            _, err = forward.communicate(timeout=30)
        finally:
            forward.kill()  # never left running, whatever failed
            held.close()
    assert forward.returncode == 0, err
    assert f"forwarding 127.0.0.1:{local} to port 8765 of main1" in err
    assert not answers()  # closed with the command
    assert _key_dirs(tmp_path) == []
    bad = ws.cli("port-forward", "far", "80:0")
    assert bad.returncode == 2 and "local port" in bad.stderr

    # The same local port again at once works; one something else listens on is
    # refused before anything starts.
    again = ws.popen(*CLI, "port-forward", "far", f"8765:{local}")
    try:
        wait_for(answers, 30, "the forwarded port to answer again")
        with socket.socket() as taken:
            taken.bind(("127.0.0.1", 0))
            taken.listen()
            busy = taken.getsockname()[1]
            refused = ws.cli("port-forward", "far", f"8765:{busy}")
    finally:
        os.kill(again.pid, signal.SIGINT)
        try:
            again.communicate(timeout=30)
        finally:
            again.kill()
    assert again.returncode == 0
    assert refused.returncode == 2, str(refused)
    assert f"127.0.0.1:{busy} is not free here" in refused.stderr
    assert "forwarding" not in refused.stderr  # said before it claims to forward
    ws.ok_cli("rm", session["id"])
