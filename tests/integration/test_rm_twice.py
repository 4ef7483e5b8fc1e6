"""Two ``jupyter cluster rm`` of one session at the same moment (two terminals, or a
Lab delete while ``rm`` runs): both succeed and say TERMINATED.

Before, both removed the same containers and files volume at once, and in five of
eight tries one of them failed on the other's work ("could not remove everything of
session …: removing volume … failed: volume is in use", exit code 1). Now the second
waits for the first. Sessions of four containers have the start-up files' volume,
where the two tripped; three rounds make the race likely.
"""

from __future__ import annotations

import pytest

from tests.support.constants import CLI, SMALL_FLAGS
from tests.support.docker import session_objects, session_volumes

from .support import Workspace

pytestmark = pytest.mark.docker


def test_two_rm_at_once_both_succeed_and_leave_nothing(ws: Workspace) -> None:
    for round_ in range(3):
        session = ws.launch("--size", "4", *SMALL_FLAGS, "--name", f"twice{round_}")
        first, second = (ws.popen(*CLI, "rm", session["id"]) for _ in range(2))
        outcomes = [(p.communicate(timeout=120), p.returncode) for p in (first, second)]
        for (out, err), code in outcomes:
            assert code == 0, (out, err)
            assert f"{session['id']}: TERMINATED" in out, (out, err)
            assert "WARNING" not in err and "could not" not in err, err
        ended = ws.show(session["id"])
        assert ended["status"] == "TERMINATED" and ended["status_reason"] == "terminated"
        assert session_objects(session["id"]) == ([], [])
        assert session_volumes(session["id"]) == []
