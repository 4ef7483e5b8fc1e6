"""What the CLI does on a local engine is in the audit log (issue 26 item 6), as the
server records REST requests: a launch, a command run in a container, a data folder
made, renamed and removed, and a termination, each with front end ``cli``, the
CLI's user as actor, and no secret (the command only as a fingerprint)."""

from __future__ import annotations

import hashlib

from tests.support.constants import SMALL_FLAGS

from .support import Workspace

SECRET = "echo s3cret-token-value"


def test_the_clis_actions_on_a_local_engine_are_audited(ws: Workspace) -> None:
    session = ws.launch(*SMALL_FLAGS, "--name", "audited", "--env", "API_TOKEN=hidden-value")
    ws.ok_cli("exec", session["id"], "main1", "--", "sh", "-c", SECRET)
    ws.ok_cli("folder", "create", "auditdata")
    ws.ok_cli("folder", "mv", "auditdata", "auditdata2")
    ws.ok_cli("folder", "rm", "auditdata2")
    ws.ok_cli("rm", session["id"])

    records = ws.json("audit")
    mine = [r for r in records if r["front_end"] == "cli"]
    actions = sorted(r["action"] for r in mine)
    assert actions == sorted(
        ["launch", "exec", "folder_create", "folder_rename", "folder_remove", "terminate"]
    ), records
    by_action = {r["action"]: r for r in mine}
    assert {r["actor"] for r in mine} == {session["owner"] or by_action["launch"]["actor"]}
    launch = by_action["launch"]
    assert launch["session_id"] == session["id"] and launch["session_name"] == "audited"
    assert launch["details"]["env"] == ["API_TOKEN"], launch
    run = by_action["exec"]["details"]
    assert run["hosts"] == ["main1"]
    digest = hashlib.sha256(f"sh -c {SECRET}".encode()).hexdigest()
    assert run["command"] == {"sha256": digest, "length": len(f"sh -c {SECRET}")}
    assert by_action["folder_rename"]["details"] == {"folder": "auditdata", "to": "auditdata2"}
    assert by_action["terminate"]["details"] == {"reason": "requested"}
    text = ws.ok_cli("audit").stdout
    assert "s3cret" not in text and "hidden-value" not in text, text
    assert not any(r["on_behalf"] for r in mine)
