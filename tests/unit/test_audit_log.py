"""The audit log's records (core.audit) and table (engine.store.audit_log): secrets
never kept, filters, newest-``limit`` reads, forgetting only by age."""

from __future__ import annotations

import json
from pathlib import Path

from jupyter_cluster.core.audit import AuditEvent, fingerprint, launch_details
from jupyter_cluster.engine.store.audit_log import AuditLog
from jupyter_cluster.engine.store.sessions import Store


def test_a_launch_keeps_env_names_and_command_fingerprints_only() -> None:
    model = {
        "image": "img",
        "size": 2,
        "env": ["TOKEN", "A"],
        "bootstrap": "curl -H 'Authorization: s3cret' x",
        "command": None,
    }
    details = launch_details(model)
    assert details["env"] == ["A", "TOKEN"]
    assert details["bootstrap"] == fingerprint(model["bootstrap"])
    assert details["bootstrap"]["length"] == len(model["bootstrap"])
    assert details["command"] is None
    assert "s3cret" not in json.dumps(details)
    assert fingerprint("a") != fingerprint("b")


def test_the_store_appends_filters_and_forgets_only_by_age(tmp_path: Path) -> None:
    store = Store(tmp_path / "state.db")
    try:
        log = AuditLog(store.tx)
        for i, (actor, action) in enumerate(
            [("alice", "launch"), ("alice", "key_access"), ("carol", "terminate")]
        ):
            log.append(AuditEvent(at=100.0 + i, actor=actor, front_end="rest", action=action,
                                  session_id="s1", target_owner="alice"))  # fmt: skip
        every = log.read()
        assert [e.action for e in every] == ["launch", "key_access", "terminate"]
        assert [e.id for e in every] == sorted(e.id for e in every)
        assert every[2].on_behalf and not every[0].on_behalf
        assert [e.action for e in log.read(actor="alice")] == ["launch", "key_access"]
        assert [e.action for e in log.read(action="terminate")] == ["terminate"]
        assert [e.at for e in log.read(since=101.0)] == [101.0, 102.0]
        assert [e.action for e in log.read(limit=1)] == ["terminate"]
        # a new record forgets those older than the retention, and only those
        log.append(AuditEvent(at=200.0, actor="bob", front_end="rest", action="folder_create"),
                   max_age=99.5)  # fmt: skip
        assert [e.at for e in log.read()] == [101.0, 102.0, 200.0]
        assert log.prune(before=150.0) == 2
        assert [e.actor for e in AuditLog(store.tx).read()] == ["bob"]  # kept in the file
        assert not [m for m in dir(log) if m.startswith(("update", "delete", "remove"))]
    finally:
        store.close()
