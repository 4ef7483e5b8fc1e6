"""The audit log (issue 26 item 6) on a server with several users.

Alice launches (with a secret in her environment and bootstrap), opens a
terminal, takes her keys (how team mode runs exec and the kernel) and creates a
folder; Carol, an admin, ends Alice's session with a reason. Carol reads each of
those with the right actor, target and front end, and no secret; Alice and Bob
get 403.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from asyncio.subprocess import PIPE
from pathlib import Path
from typing import Any

import pytest

from jupyter_cluster.engine.store.audit_log import AuditLog
from jupyter_cluster.engine.store.sessions import Store
from tests.support.constants import CLI

from .support import call, jp_async, ok_http, wait_status
from .test_owners import ALICE, BOB, CAROL, TokenUsers

pytestmark = pytest.mark.docker

SECRET = "tok-8d1f3a-never-logged"


@pytest.fixture
def cluster_config() -> dict[str, Any]:
    return {
        "ServerApp": {"identity_provider_class": TokenUsers},
        "ClusterApp": {"admin_users": ["carol"]},
    }


async def audit_until(jp_fetch: Any, count: int, **params: str) -> list[dict[str, Any]]:
    """The audit log as Carol reads it, once it holds ``count`` records (written by
    a thread after each request)."""
    for _ in range(100):
        records: list[dict[str, Any]] = await ok_http(
            jp_fetch, "audit", params=params, headers=CAROL
        )
        if len(records) >= count:
            return records
        await asyncio.sleep(0.1)
    raise AssertionError(f"the audit log has {records}, not {count} records")


@jp_async
async def test_every_action_is_recorded_with_its_actor_and_no_secret(
    jp_fetch: Any, cluster: Any
) -> None:
    body = {"cpu": 0.25, "mem": "256m", "env": {"API_TOKEN": SECRET}, "bootstrap": f"echo {SECRET}"}
    session = await ok_http(jp_fetch, "sessions", method="POST", body=body, headers=ALICE)
    sid = session["id"]
    await wait_status(jp_fetch, sid, "RUNNING", headers=ALICE)
    term = await ok_http(
        jp_fetch, "sessions", sid, "containers", "main1", "terminals", method="POST",
        body="", headers=ALICE,
    )  # fmt: skip
    await jp_fetch("api", "terminals", term["name"], method="DELETE", headers=ALICE)
    await ok_http(jp_fetch, "sessions", sid, "access", headers=ALICE)
    await ok_http(jp_fetch, "folders", method="POST", body={"name": "audited"}, headers=ALICE)
    code, _, _ = await call(jp_fetch, "sessions", sid, "access", headers=CAROL)
    assert code == 403  # refused: not recorded as a key access
    await ok_http(
        jp_fetch, "sessions", sid, method="DELETE", params={"reason": "over budget"}, headers=CAROL
    )
    await wait_status(jp_fetch, sid, "TERMINATED", headers=ALICE)

    records = await audit_until(jp_fetch, 5)
    assert SECRET not in json.dumps(records)
    seen = [(r["action"], r["actor"], r["target_owner"], r["on_behalf"]) for r in records]
    assert seen == [
        ("launch", "alice", "alice", False),
        ("terminal", "alice", "alice", False),
        ("key_access", "alice", "alice", False),
        ("folder_create", "alice", "alice", False),
        ("terminate", "carol", "alice", True),
    ]
    assert all(r["front_end"] == "rest" for r in records)
    assert [r["session_id"] for r in records] == [sid, sid, sid, None, sid]
    launch, terminal, _, folder, end = records
    assert launch["details"]["env"] == ["API_TOKEN"]
    assert launch["details"]["bootstrap"]["length"] == len(f"echo {SECRET}")
    assert terminal["details"] == {"host": "main1"}
    assert folder["details"] == {"folder": "audited"}
    assert end["details"] == {"reason": "over budget"}
    assert [r["time"] for r in records] == sorted(r["time"] for r in records)

    only = await ok_http(jp_fetch, "audit", params={"actor": "carol"}, headers=CAROL)
    assert [r["action"] for r in only] == ["terminate"]
    last = await ok_http(jp_fetch, "audit", params={"limit": "2"}, headers=CAROL)
    assert [r["action"] for r in last] == ["folder_create", "terminate"]
    later = await ok_http(jp_fetch, "audit", params={"since": "2999-01-01"}, headers=CAROL)
    assert later == []
    for who in (ALICE, BOB):
        code, data, _ = await call(jp_fetch, "audit", headers=who)
        assert code == 403, data
    code, data, _ = await call(jp_fetch, "audit", params={"action": "reboot"}, headers=CAROL)
    assert code == 400 and data["field"] == "action", data
    await ok_http(jp_fetch, "folders", "audited", method="DELETE", headers=ALICE)
    records = await audit_until(jp_fetch, 6)
    assert records[-1]["action"] == "folder_remove" and records[-1]["actor"] == "alice"

    # the CLI reads the same log from the store the server writes
    assert json.loads(await cli("audit", "--json")) == records
    table = (await cli("audit", "--user", "carol")).splitlines()
    assert table[0].split()[:4] == ["TIME", "ACTOR", "FRONT", "END"]
    [row] = table[1:]
    assert "carol  rest" in row and "terminate (admin)" in row and "over budget" in row, row
    assert (await cli("audit", "--since", "2999-01-01")).strip() == "no audit records"


@jp_async
async def test_a_record_still_being_written_at_server_stop_is_kept(
    jp_serverapp: Any, jp_fetch: Any, jp_data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The record of a request that has just ended is written by a thread; the
    # server's stop closes the store the log is in, so it waits for the thread.
    append = AuditLog.append

    def slow_append(log: AuditLog, *args: Any, **kwargs: Any) -> int:
        time.sleep(0.5)  # still writing when the server stops
        return append(log, *args, **kwargs)

    monkeypatch.setattr(AuditLog, "append", slow_append)
    await ok_http(jp_fetch, "folders", method="POST", body={"name": "late"}, headers=ALICE)
    await jp_serverapp.web_app.settings["jupyter_cluster"].stop_extension()
    store = Store(jp_data_dir / "cluster" / "cluster.db")
    try:
        records = AuditLog(store.tx).read()
    finally:
        store.close()
    assert [(r.action, r.actor, r.details) for r in records] == [
        ("folder_create", "alice", {"folder": "late"})
    ]


async def cli(*args: str) -> str:
    """``jupyter cluster ARGS`` in this test's Jupyter dirs (the server's store); its
    output (asserting exit code 0)."""
    proc = await asyncio.create_subprocess_exec(
        *CLI, *args, env=dict(os.environ), stdout=PIPE, stderr=PIPE
    )
    out, err = await proc.communicate()
    assert proc.returncode == 0, err.decode()
    return out.decode()
