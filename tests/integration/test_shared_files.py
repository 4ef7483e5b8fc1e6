"""The subs of a session on one agent get their start-up files through one volume.

On a real Docker engine: in a size-3 session, sub1 carries sub2's files and sub2 is
never copied into (Docker's own record of the containers says which ran the copy
command), yet each runs with its own host key, work's key and the session's files,
and ``ssh`` works between all of them. main1 does not mount the volume. The volume is
root's alone: work cannot list it in a sub, root in sub2 cannot write to it, and
``nobody`` on the agent host cannot read a key in it where Docker keeps it. It is
removed with the session. Sessions of one or two containers make none.
"""

from __future__ import annotations

import json
import pwd
import subprocess

import pytest

from jupyter_cluster.core import naming
from tests.support.constants import SMALL_FLAGS
from tests.support.docker import docker, session_volumes

from .support import Workspace

pytestmark = pytest.mark.docker

SHARED = naming.SHARED_FILES_DIR
KEY = f"{naming.RUNTIME_DIR}/ssh_host_ed25519_key.pub"


def root_in(container: str, script: str) -> tuple[int, str]:
    """Run ``script`` as root in ``container`` (docker exec); exit code and output."""
    result = docker("exec", container, "sh", "-c", script, check=False)
    return result.returncode, result.stdout + result.stderr


def test_subs_start_from_the_volume_and_it_goes_with_the_session(ws: Workspace) -> None:
    session = ws.launch("--size", "3", *SMALL_FLAGS)
    sid = str(session["id"])
    assert session_volumes(sid) == [f"jc-{sid[:12]}-files"]
    names = {h: f"jc-{sid[:12]}-{h}" for h in ("main1", "sub1", "sub2")}
    entrypoints = {
        h: json.loads(docker("inspect", "--format", "{{json .Config.Entrypoint}}", n).stdout)
        for h, n in names.items()
    }
    tree = f"{SHARED}/sub2/tree"
    script = f"{tree}/opt/jupyter-cluster/start.sh"
    assert entrypoints["sub2"] == ["/bin/sh", script, "--files-from", tree]
    assert SHARED not in " ".join(entrypoints["main1"] + entrypoints["sub1"])
    mounts = {
        h: {
            m["Destination"]: m["RW"]
            for m in json.loads(docker("inspect", "--format", "{{json .Mounts}}", n).stdout)
        }
        for h, n in names.items()
    }
    assert SHARED not in mounts["main1"]
    assert mounts["sub1"][SHARED] is True and mounts["sub2"][SHARED] is False
    # Each container serves its own host key, the one every known_hosts lists for it.
    keys = {h: root_in(n, f"cat {KEY}")[1].split()[1] for h, n in names.items()}
    assert len(set(keys.values())) == 3
    known = ws.sh(sid, "sub2", "cat ~/.ssh/known_hosts")
    for host, key in keys.items():
        assert any(host in line and key in line for line in known.splitlines()), (host, known)
    assert ws.sh(sid, "sub1", "ssh sub2 hostname && ssh main1 hostname").split() == [
        "sub2",
        "main1",
    ]
    assert ws.sh(sid, "main1", "ssh sub1 cat /home/config/hostfile").split() == [
        "main1",
        "sub1",
        "sub2",
    ]
    # Only root enters the volume; in a sub, not even root writes to it.
    for host in ("sub1", "sub2"):
        listed = ws.exec(sid, host, "ls", SHARED)
        assert listed.returncode != 0 and "Permission denied" in listed.stderr, str(listed)
    code, said = root_in(names["sub2"], f"touch {SHARED}/x")
    assert code != 0 and "Read-only file system" in said, said
    # Another user of the agent host, where Docker keeps the volume's files.
    where = docker("volume", "inspect", "--format", "{{.Mountpoint}}", session_volumes(sid)[0])
    key = f"{where.stdout.strip()}/sub2/tree{naming.RUNTIME_DIR}/ssh_host_ed25519_key"
    nobody = pwd.getpwnam("nobody")
    ids = (f"--reuid={nobody.pw_uid}", f"--regid={nobody.pw_gid}", "--clear-groups")
    read = subprocess.run(["setpriv", *ids, "--", "cat", key], capture_output=True, text=True)
    assert read.returncode != 0 and "Permission denied" in read.stderr, read
    assert subprocess.run(["cat", key], capture_output=True).returncode == 0, "the probe can fail"
    assert ws.cli("rm", sid).returncode == 0
    assert session_volumes(sid) == []


@pytest.mark.parametrize("size", [1, 2])
def test_a_session_of_one_or_two_containers_makes_no_volume(ws: Workspace, size: int) -> None:
    session = ws.launch("--size", str(size), *SMALL_FLAGS)
    sid = str(session["id"])
    assert session_volumes(sid) == []
    hosts = ["main1", "sub1"][:size]
    assert ws.sh(sid, hosts[-1], "cat /home/config/hostfile").split() == hosts
    assert ws.cli("rm", sid).returncode == 0
