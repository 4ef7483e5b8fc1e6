"""Sessions from launch to removal through the CLI (issue #2: 6, 7, 8, 10).

A failing bootstrap, following and reading logs (also of a dead container),
terminating and the history, a network someone joined a container to, and the
data-folder commands. Each test has its own
workspace; everything it launches must be gone at its end.
"""

from __future__ import annotations

import json
import time
import uuid

import pytest

from tests.support.constants import CLI, IMAGE, READY, SMALL_FLAGS
from tests.support.docker import container_exists, docker, session_objects

from .support import Workspace

pytestmark = pytest.mark.docker

FAIL_ON_SUB2 = (
    'echo "boot output of $BACKENDAI_CLUSTER_HOST"; [ "$BACKENDAI_CLUSTER_HOST" != sub2 ] || exit 3'
)


def test_failing_bootstrap_fails_the_launch_and_leaves_nothing(ws: Workspace) -> None:
    result = ws.cli("launch", "--size", "3", *SMALL_FLAGS, "--bootstrap", FAIL_ON_SUB2, "--json")
    assert result.returncode == 1, str(result)
    assert "Traceback" not in result.stderr
    assert "sub2" in result.stderr and "boot output of sub2" in result.stderr, result.stderr
    sessions = ws.json("ls", "--all")
    assert len(sessions) == 1
    session = sessions[0]
    assert session["status"] == "ERROR"
    reason = session["status_reason"]
    assert "sub2" in reason, reason
    assert "exit code 3" in reason, reason
    assert "boot output of sub2" in reason, reason  # the tail of its output
    assert session_objects(session["id"]) == ([], [])
    assert ws.docker_objects() == ([], [])
    store = ws.store()
    try:
        assert store.load_keys(session["id"]) is None
    finally:
        store.close()
    # An ERROR session is still listed (it needs attention) and can be removed.
    assert [s["id"] for s in ws.json("ls")] == [session["id"]]
    ws.ok_cli("rm", session["id"])


def test_logs_follow_and_logs_of_a_dead_container(ws: Workspace) -> None:
    session = ws.launch("--size", "2", *SMALL_FLAGS)
    sid = session["id"]
    sub1 = next(c for c in session["containers"] if c["host"] == "sub1")
    follow = ws.popen(*CLI, "logs", sid, "main1", "--follow")
    try:
        # --follow prints what is there, then keeps waiting.
        assert follow.stdout is not None
        seen = []
        deadline = time.monotonic() + 60
        while f"{READY}\n" not in seen and time.monotonic() < deadline:
            line = follow.stdout.readline()
            if not line:
                break
            seen.append(line)
        assert f"{READY}\n" in seen, seen
        time.sleep(1)
        assert follow.poll() is None, "logs --follow ended while the container runs"

        # Kill sub1's init (PID 1): the container is dead but its log stays readable.
        docker("kill", sub1["container_id"])
        dead = docker("inspect", "-f", "{{.State.Running}}", sub1["container_id"]).stdout
        assert dead.strip() == "false"
        lines = ws.ok_cli("logs", sid, "sub1").stdout.splitlines()
        assert "sshd: Server listening on 0.0.0.0 port 2200." in lines, lines
        assert READY in lines, lines
        assert ws.ok_cli("logs", sid, "sub1", "--tail", "1").stdout.splitlines() == lines[-1:]
        shown = ws.show(sid)
        assert shown["status"] == "RUNNING_DEGRADED"
        assert [c["status"] for c in shown["containers"]] == ["RUNNING", "EXITED"]
        assert "sub1" in shown["status_reason"]

        # Removing the session ends --follow; both logs stay readable (kept copies),
        # the dead container's included.
        ws.ok_cli("rm", sid)
        out, err = follow.communicate(timeout=30)
        seen.append(out)
        assert ws.ok_cli("logs", sid, "sub1").stdout.splitlines() == lines
        kept = ws.ok_cli("logs", sid, "main1").stdout.splitlines()
        assert kept == "".join(seen).splitlines(), (kept, seen)  # what --follow printed
        assert ws.ok_cli("logs", sid, "main1", "--tail", "1").stdout.splitlines() == kept[-1:]
    finally:
        if follow.poll() is None:
            follow.kill()
            follow.communicate()
    assert follow.returncode == 0, err
    assert "".join(seen).count(f"{READY}\n") == 1
    assert "Traceback" not in err
    assert session_objects(sid) == ([], [])


def test_terminate_removes_everything_and_keeps_history(ws: Workspace) -> None:
    session = ws.launch("--size", "2", *SMALL_FLAGS, "--name", "to-remove")
    sid = session["id"]
    ids = [c["container_id"] for c in session["containers"]]
    containers, networks = session_objects(sid)
    assert sorted(containers) == sorted(ids) and len(networks) == 1
    ended = ws.json("rm", "to-remove")
    assert [s["status"] for s in ended] == ["TERMINATED"]
    assert session_objects(sid) == ([], [])
    assert not any(container_exists(cid) for cid in ids)
    assert docker("network", "inspect", networks[0], check=False).returncode != 0
    assert ws.json("ls") == []
    history = ws.json("ls", "--all")
    assert [(s["id"], s["status"]) for s in history] == [(sid, "TERMINATED")]
    assert {c["status"] for c in history[0]["containers"]} == {"TERMINATED"}
    assert "to-remove" in ws.ok_cli("ls", "--all").stdout
    assert "to-remove" not in ws.ok_cli("ls").stdout
    store = ws.store()
    try:
        assert store.load_keys(sid) is None
    finally:
        store.close()
    # Removing it again changes nothing; exec into it is refused with exit 2.
    assert ws.json("rm", sid)[0]["status"] == "TERMINATED"
    refused = ws.cli("exec", sid, "main1", "--", "true")
    assert refused.returncode == 2 and len(refused.stderr.splitlines()) == 1, str(refused)


def test_rm_names_a_container_someone_joined_to_the_network_and_finishes_once_it_left(
    ws: Workspace,
) -> None:
    """A container that is not the session's, joined to its network by hand, keeps
    Docker from removing the network: ``rm`` fails saying which one and how to free
    it (Docker's own refusal names none), and the same ``rm`` finishes once it left."""
    sid = ws.launch(*SMALL_FLAGS, "--name", "joined")["id"]
    _, [network_id] = session_objects(sid)
    network = docker("network", "inspect", "-f", "{{.Name}}", network_id).stdout.strip()
    visitor = f"jc-test-visitor-{uuid.uuid4().hex[:8]}"
    try:
        docker("run", "-d", "--name", visitor, "--network", network, IMAGE, "sleep", "600")
        refused = ws.cli("rm", "joined")
        assert refused.returncode != 0, str(refused)
        assert refused.stderr.count(f"{visitor} still on it") == 1, str(refused)  # not twice
        assert f"docker network disconnect {network} CONTAINER" in refused.stderr, str(refused)
        assert ws.show(sid)["status"] == "TERMINATING"
        assert session_objects(sid) == ([], [network_id])  # its containers went all the same
    finally:
        docker("rm", "-f", visitor, check=False)
    assert [s["status"] for s in ws.json("rm", "joined")] == ["TERMINATED"]
    assert session_objects(sid) == ([], [])


def test_folder_commands(ws: Workspace) -> None:
    assert ws.json("folder", "ls") == []
    created = ws.ok_cli("folder", "create", "data-1")
    assert "data-1" in created.stdout
    path = ws.folders_root / "data-1"
    assert path.is_dir()
    assert path.stat().st_uid == 1000 or path.stat().st_mode & 0o777 == 0o777
    ws.ok_cli("folder", "create", "models")
    listed = ws.json("folder", "ls")
    assert listed == [
        {"name": "data-1", "path": str(path), "shared": False},
        {"name": "models", "path": str(ws.folders_root / "models"), "shared": False},
    ]
    for args in (
        ("folder", "create", "../etc"),
        ("folder", "create", "/etc"),
        ("folder", "create", "a/b"),
        ("folder", "create", "data-1"),  # exists
        ("folder", "rm", "nope"),
        ("folder", "rm", "../etc"),
    ):
        result = ws.cli(*args)
        assert result.returncode == 2, str(result)
        assert len(result.stderr.splitlines()) == 1 and "Traceback" not in result.stderr
        assert result.stdout == ""
    assert not (ws.folders_root.parent / "etc").exists()
    (path / "file.txt").write_text("x")
    ws.ok_cli("folder", "rm", "data-1")
    assert not path.exists()
    assert [f["name"] for f in json.loads(ws.ok_cli("folder", "ls", "--json").stdout)] == ["models"]
    assert ws.docker_objects() == ([], [])


def test_a_bootstrap_whose_output_ends_without_a_newline_still_settles(ws: Workspace) -> None:
    """The start-up script's "ready" (or "bootstrap failed") line is glued to output
    that did not end its line: the launch still sees it, at once, both ways."""
    started = time.monotonic()
    session = ws.launch(*SMALL_FLAGS, "--bootstrap", "printf 'no newline here'")
    assert session["status"] == "RUNNING", session
    assert time.monotonic() - started < 120  # not the readiness timeout
    ws.ok_cli("rm", session["id"])
    failed = ws.cli("launch", *SMALL_FLAGS, "--bootstrap", "printf partial; exit 4", "--json")
    assert failed.returncode == 1 and "exit code 4" in failed.stderr, str(failed)
    assert time.monotonic() - started < 240
    ended = [s for s in ws.json("ls", "--all") if s["status"] == "ERROR"]
    assert len(ended) == 1 and session_objects(ended[0]["id"]) == ([], [])
