"""A failed launch's logs outlive it whole (#14 item 3), on real Docker through the CLI.

The session's ERROR reason quotes only the end of the failing container's log; the
whole log of each container the launch created is kept before they are removed,
so ``logs`` (and REST, the Lab panel, which read the same copy) shows all of it.
"""

from __future__ import annotations

import pytest

from tests.support.constants import SMALL_FLAGS
from tests.support.docker import session_objects

from .support import Workspace

pytestmark = pytest.mark.docker

#: sub1's bootstrap prints 300 numbered lines and exits 3; main1's succeeds.
LOUD_FAILURE = (
    'if [ "$BACKENDAI_CLUSTER_HOST" = sub1 ]; then '
    'i=1; while [ $i -le 300 ]; do echo "boot line $i"; i=$((i+1)); done; exit 3; fi'
)


def test_the_whole_log_of_a_failed_launch_is_kept(ws: Workspace) -> None:
    result = ws.cli("launch", "--size", "2", *SMALL_FLAGS, "--bootstrap", LOUD_FAILURE)
    assert result.returncode == 1, str(result)
    (session,) = ws.json("ls", "--all")
    sid = session["id"]
    assert session["status"] == "ERROR" and "exit code 3" in session["status_reason"]
    assert "boot line 1\n" not in session["status_reason"]  # the reason has only a tail
    assert session_objects(sid) == ([], [])  # the containers are gone all the same

    sub1 = ws.ok_cli("logs", sid, "sub1").stdout.splitlines()
    boot = [line for line in sub1 if line.startswith("boot line ")]
    assert boot == [f"boot line {i}" for i in range(1, 301)], sub1
    # in order, nothing lost; only sshd, started beside the bootstrap, may write between
    first, last = sub1.index("boot line 1"), sub1.index("boot line 300")
    between = [line for line in sub1[first : last + 1] if not line.startswith("boot line ")]
    assert all(line.startswith("sshd: Server listening on ") for line in between), between
    assert ws.ok_cli("logs", sid, "sub1", "--tail", "2").stdout.splitlines() == sub1[-2:]
    assert ws.ok_cli("logs", sid, "main1").stdout  # every created container's log

    # removing the ERROR session keeps the copies
    ws.ok_cli("rm", sid)
    assert ws.ok_cli("logs", sid, "sub1").stdout.splitlines() == sub1
