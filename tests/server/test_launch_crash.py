"""A Jupyter server SIGKILLed while it drives a launch (issue #11: 5).

A launch over REST with a slow ``bootstrap`` stays PREPARING with its containers
created and its keys stored; the server driving it is then killed (no clean stop).
A new server on the same Jupyter data dir reconciles at start-up and must account
for the session: ERROR because the process launching it exited, nothing of it left
in Docker or in the store's keys, and launches on the new server work.

Real ``jupyter server`` processes, as in :mod:`.test_restart` (:func:`.support.server`
in the ``workspace`` fixture's dirs).
"""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from jupyter_cluster.engine.store.sessions import Store
from tests.support.docker import running_hosts, session_objects
from tests.support.waiting import eventually

from .support import Server, jp_async, server

pytestmark = pytest.mark.docker

#: Keeps the session PREPARING for longer than the test waits.
SLOW_BOOTSTRAP = "sleep 300"


def has_keys(data_dir: Path, session_id: str) -> bool:
    """Whether the store of ``data_dir`` holds the session's key material."""
    store = Store(data_dir / "cluster" / "cluster.db")
    try:
        return store.load_keys(session_id) is not None
    finally:
        store.close()


async def wait_preparing_with_containers(api: Server, session_id: str, size: int) -> None:
    """Wait until the session is PREPARING and Docker has all its containers."""
    seen: dict[str, object] = {}

    async def probe() -> bool:
        seen.update(await api.session(session_id))
        assert seen["status"] in ("PENDING", "PREPARING"), seen
        return seen["status"] == "PREPARING" and len(session_objects(session_id)[0]) == size

    await eventually(probe, 120, "a PREPARING session with its containers", seen=seen.copy)


@jp_async
async def test_a_server_killed_during_a_launch_leaves_it_in_error_and_nothing_behind(
    workspace: Path, jp_data_dir: Path
) -> None:
    async with server(workspace) as first:
        body = {"size": 2, "bootstrap": SLOW_BOOTSTRAP, "name": "slow"}
        code, session = await first.call("POST", "cluster/api/sessions", body)
        assert code == 201, session
        sid = session["id"]
        await wait_preparing_with_containers(first, sid, 2)
        assert has_keys(jp_data_dir, sid)
        assert first.proc is not None
        pid = first.proc.pid
        await first.stop(signal.SIGKILL)
    assert len(session_objects(sid)[0]) == 2  # the crash cleaned nothing up

    async with server(workspace) as second:
        ended = await second.session(sid)
        assert ended["status"] == "ERROR", ended
        assert ended["status_reason"] == f"the process launching it (pid {pid}) exited"
        assert [c["status"] for c in ended["containers"]] == ["TERMINATED", "TERMINATED"]
        assert session_objects(sid) == ([], [])
        assert not has_keys(jp_data_dir, sid)

        code, fresh = await second.call("POST", "cluster/api/sessions", {"size": 2})
        assert code == 201, fresh

        async def running() -> bool:
            status = (await second.session(fresh["id"]))["status"]
            assert status in ("PENDING", "PREPARING", "RUNNING"), status
            return status == "RUNNING"

        await eventually(running, 120, "the fresh session to run")
        assert running_hosts(fresh["id"]) == {"main1": True, "sub1": True}
        for ref in (fresh["id"], sid):
            code, _ = await second.call("DELETE", f"cluster/api/sessions/{ref}")
            assert code == 204
        assert (await second.session(sid))["status"] == "TERMINATED"
        assert session_objects(fresh["id"]) == ([], [])
        await second.stop(signal.SIGTERM)
