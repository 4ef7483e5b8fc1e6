"""``jupyter cluster ssh`` in team mode (#24 item 4): through the shared service.

alice, as her Unix user with her Hub token (as in a terminal of her server), runs
``jupyter-cluster ssh`` on her session: the key comes from the service's owner-only
route and reaches main1 and a sub through it. bob, as his Unix user, gets nothing of
her session: not found, and no key written anywhere.
"""

from __future__ import annotations

from tests.support.constants import BIN, SMALL_BODY

from .support import Hub, end_sessions, launch, wait_running


def test_a_user_reaches_their_own_containers_and_nobody_elses(
    hub: Hub, team: dict[str, str]
) -> None:
    alice = team["alice"]
    session = launch(hub, "alice", alice, {**SMALL_BODY, "size": 2})
    try:
        wait_running(hub, "alice", alice, session["id"])
        cli = str(BIN / "jupyter-cluster")
        mine = hub.run_as("alice", [cli, "ssh", session["id"], "sub1", "--", "hostname"])
        assert mine.returncode == 0 and mine.stdout == "sub1\n", mine
        theirs = hub.run_as("bob", [cli, "ssh", session["id"], "--", "hostname"])
        assert theirs.returncode == 2 and "main1" not in theirs.stdout, theirs
        assert "no session" in theirs.stderr.lower(), theirs
    finally:
        end_sessions(hub, "alice", alice)
