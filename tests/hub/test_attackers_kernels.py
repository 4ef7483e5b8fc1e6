"""Another Unix user of the team's host against bob's kernel (issue #23: X2, X3, X5).

While bob starts a cluster kernel from his server, runs code in it and restarts
it, alice (a real Unix user, through ``setpriv``) runs :mod:`tests.hub.probes`:

- a watch of every process's ``/proc/*/cmdline`` and ``environ`` (X5: the kernel's
  HMAC key must appear in none she can read, at the start or the restart);
- plain ZMQ SUB sockets on every loopback TCP listener and every Unix socket she
  can name (X2: bob's code and output must not reach her);
- and every login account of the host (uid 1000 and up: the one that shared the
  containers' uid before the fix among them) tries ``/proc/<pid>/root`` and
  ``environ`` of the session's processes (X3: denied for each).

Before the fixes each probe caught something: the key on an ``ssh`` command line,
bob's ``execute_input`` on the tunnel's loopback ports, and the uid-1000 account
listing ``/home/work`` of every session. Controls in the same run show the first
two still would: a process of bob's with a canary key on its command line, and a
plain ZMQ publisher on a loopback port sending a canary, are both caught.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import pwd
import subprocess
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import zmq

from jupyter_cluster.core.uids import TEAM_WORK_UID
from tests.support.constants import API, BIN, SMALL_BODY
from tests.support.waiting import wait_for

from .support import Hub, launch, ok, status
from .test_team import _execute

PROBES = Path(__file__).with_name("probes.py")


def _as(user: pwd.struct_passwd, *args: str) -> list[str]:
    ids = (f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}", "--init-groups")
    return ["setpriv", *ids, "--", str(BIN / "python3"), str(PROBES), *args]


def _start(user: str, *args: str) -> subprocess.Popen[str]:
    entry = pwd.getpwnam(user)
    return subprocess.Popen(
        _as(entry, *args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd="/"
    )


def _result(proc: subprocess.Popen[str]) -> dict[str, Any]:
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    return dict(json.loads(out))


def _kernel_key(user: str, kernel_id: str) -> str:
    """The HMAC key of ``user``'s kernel, from its connection file (as root)."""
    home = Path(pwd.getpwnam(user).pw_dir)
    found = list(home.glob(f"**/kernel-{kernel_id}.json"))
    assert found, f"no connection file of kernel {kernel_id} under {home}"
    return str(json.loads(found[0].read_text())["key"])


def _accounts() -> list[pwd.struct_passwd]:
    """The host's login accounts (uid 1000 up to nobody's), root's view."""
    return [p for p in pwd.getpwall() if 1000 <= p.pw_uid < 65534]


@contextlib.contextmanager
def _controls(canary: str) -> Iterator[None]:
    """What the probes must catch, while the test runs: a process of bob's with
    ``key=CANARY`` on its command line, and a ZMQ publisher on a loopback port
    sending CANARY (as a kernel's IOPub on TCP would)."""
    bob = pwd.getpwnam("bob")
    ids = (f"--reuid={bob.pw_uid}", f"--regid={bob.pw_gid}", "--init-groups")
    script = "import time\nwhile True: time.sleep(1)"
    holder = subprocess.Popen(
        ["setpriv", *ids, "--", str(BIN / "python3"), "-c", script, f"key={canary}"], cwd="/"
    )
    context = zmq.Context()
    pub = context.socket(zmq.PUB)
    pub.setsockopt(zmq.LINGER, 0)
    pub.bind("tcp://127.0.0.1:*")
    done = threading.Event()

    def publish() -> None:
        while not done.wait(0.2):
            pub.send(f"execute_input {canary}".encode())

    sender = threading.Thread(target=publish, daemon=True)
    sender.start()
    try:
        yield
    finally:
        done.set()
        sender.join()
        pub.close()
        context.term()
        holder.kill()
        holder.wait()


@pytest.mark.serial  # its probe hears every kernel on the machine
def test_another_user_reads_no_kernel_traffic_no_key_and_no_session_files(
    hub: Hub, team: dict[str, str]
) -> None:
    bob = team["bob"]
    stop = Path(f"/tmp/jc-probe-stop-{uuid.uuid4().hex}")
    watch = _start("alice", "watch", str(stop), str(TEAM_WORK_UID))
    listen = _start("alice", "listen", str(stop))
    marker = f"bobs-secret-{uuid.uuid4().hex[:8]}"
    sid = ""
    canary = f"control-{uuid.uuid4().hex[:12]}"
    controls = contextlib.ExitStack()
    controls.enter_context(_controls(canary))
    try:  # from here on, the probes are stopped whatever happens
        session = launch(hub, "bob", bob, {**SMALL_BODY, "size": 2, "start_kernel": True})
        sid = session["id"]
        seen: dict[str, Any] = {}

        def kernel_runs() -> bool:
            seen.update(status(hub, "bob", bob, sid))
            assert seen["kernel_state"] not in ("failed", "gone"), seen
            return bool(seen["kernel_state"] == "running")

        wait_for(kernel_runs, 240, "bob's kernel to run", seen=lambda: seen)
        kernel_id = seen["kernel_id"]
        code = f"for i in range(3): print({marker!r}, i)"
        assert marker in asyncio.run(_execute(hub, "bob", bob, kernel_id, code))
        path = f"api/kernels/{kernel_id}/restart"
        ok(hub.server_call("bob", "POST", path, bob), 200)
        out = asyncio.run(_execute(hub, "bob", bob, kernel_id, code))
        assert marker in out  # the restarted kernel answers bob
        key = _kernel_key("bob", kernel_id)
        tried = {p.pw_name: _result(subprocess.Popen(
            _as(p, "rootfs", str(TEAM_WORK_UID)), stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True, cwd="/",
        )) for p in _accounts()}  # fmt: skip
    finally:
        stop.touch()
        controls.close()
        try:
            watched, heard = _result(watch), _result(listen)
        finally:
            for probe in (watch, listen):
                if probe.poll() is None:  # it did not end: never left scanning
                    probe.kill()
                    probe.wait()
            stop.unlink()
            if sid:
                ok(hub.server_call("bob", "DELETE", f"{API}/sessions/{sid}", bob), 204)
    # The probes work: each caught its control.
    assert [text for text in watched["found"] if canary in text], watched["found"][:5]
    assert [f for f in heard["frames"] if canary in f], heard["tried"]
    # X5: the key was on no command line or environment alice could read
    assert watched["rounds"] > 10
    assert not [text for text in watched["found"] if key in text]
    # X2: alice's subscribers were connected while bob worked, and heard nothing of it
    assert heard["tried"], heard
    assert not [f for f in heard["frames"] if marker in f]
    assert not [f for f in heard["frames"] if "execute_input" in f and canary not in f]
    # X3: the session's processes exist, and no host account reaches inside them
    assert watched["rootfs"]["seen"] > 0 and watched["rootfs"]["opened"] == []
    assert tried and all(r["opened"] == [] for r in tried.values()), tried
    assert any(r["seen"] > 0 and r["denied"] > 0 for r in tried.values()), tried
