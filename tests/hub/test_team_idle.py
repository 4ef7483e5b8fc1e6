"""Idle clean-up in team mode (#14 item 5): an ``exec`` a user runs from their own
server's terminal (the CLI goes over SSH, unseen by the shared service) counts as
use of the session for the idle clean-up of the server where its kernel runs.

alice's named server ``idle`` has ``ClusterApp.idle_timeout`` on (see
:mod:`.lab_config`); her CLI, run as the Unix user alice, shares that server's exec
log (both are hers, on the same machine).
"""

from __future__ import annotations

import pwd
import subprocess
import time
from typing import Any

from tests.support.constants import API, BIN, SMALL_BODY
from tests.support.waiting import wait_for

from .lab_config import IDLE_SERVER, IDLE_TIMEOUT
from .support import Hub, ok

SLEEP = IDLE_TIMEOUT + 5


def _status(hub: Hub, token: str, sid: str) -> dict[str, Any]:
    reply = hub.server_call("alice", "GET", f"{API}/sessions/{sid}", token, IDLE_SERVER)
    return dict(ok(reply).json())


def _exec_as_alice(hub: Hub, sid: str) -> subprocess.Popen[str]:
    """``jupyter-cluster exec SID --all -- sleep SLEEP`` as alice, in the background."""
    entry = pwd.getpwnam("alice")
    ids = (f"--reuid={entry.pw_uid}", f"--regid={entry.pw_gid}", "--init-groups")
    argv = (str(BIN / "jupyter-cluster"), "exec", sid, "--all", "--", "sleep", f"{SLEEP:g}")
    return subprocess.Popen(
        ("setpriv", *ids, "--", *argv),
        env=hub.user_env("alice"),
        cwd=entry.pw_dir,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_an_exec_over_ssh_from_the_users_cli_keeps_the_session(
    hub: Hub, team: dict[str, str]
) -> None:
    alice = team["alice"]
    hub.start_server("alice", IDLE_SERVER)
    body = {**SMALL_BODY, "size": 2, "start_kernel": True}
    reply = hub.server_call("alice", "POST", f"{API}/sessions", alice, IDLE_SERVER, json=body)
    sid = ok(reply, 201).json()["id"]
    proc: subprocess.Popen[str] | None = None
    try:
        seen: dict[str, Any] = {}

        def idle_counts() -> bool:
            seen.update(_status(hub, alice, sid))
            assert seen["kernel_state"] not in ("failed", "gone"), seen
            return seen["kernel_state"] == "running" and seen.get("idle_deadline") is not None

        wait_for(idle_counts, 240, "the kernel to run, idle", seen=lambda: seen)
        first = float(seen["idle_deadline"])
        assert first <= time.time() + IDLE_TIMEOUT + 1, seen

        proc = _exec_as_alice(hub, sid)

        def in_use() -> bool:
            seen.update(_status(hub, alice, sid))
            assert proc is not None and proc.poll() is None, proc.communicate()
            return seen.get("idle_deadline") is None

        wait_for(in_use, IDLE_TIMEOUT, "alice's exec to count as use", seen=lambda: seen)
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        ended = time.time()
        assert ended > first + 2  # past the deadline the idle kernel alone gave it

        session = _status(hub, alice, sid)
        assert session["status"] == "RUNNING", session
        deadline = session["idle_deadline"]  # now counted from the exec's end
        assert deadline is not None, session
        assert ended - 3 + IDLE_TIMEOUT <= deadline <= ended + IDLE_TIMEOUT, session

        def terminated() -> bool:
            seen.update(_status(hub, alice, sid))
            return seen["status"] == "TERMINATED"

        wait_for(terminated, IDLE_TIMEOUT + 30, "the idle session to end", seen=lambda: seen)
        assert seen["status_reason"].startswith(f"terminated after {IDLE_TIMEOUT:g} s idle"), seen
        assert seen["ended_at"] >= deadline - 1, seen
    finally:
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.communicate()
        hub.server_call("alice", "DELETE", f"{API}/sessions/{sid}", alice, IDLE_SERVER)
        hub.stop_server("alice", IDLE_SERVER)
