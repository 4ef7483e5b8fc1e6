"""Faults of a running session seen through a real Jupyter server: a sub container dies.

``docker kill`` ends sub1 of a size-3 session launched over REST, behind the
engine's back. The server's periodic reconciliation (``ClusterApp.reconcile_interval``,
lowered here) must notice: the session becomes RUNNING_DEGRADED with a reason that
names sub1, the events stream says so, sub1's log stays readable, and DELETE still
removes every container, the network and the session's keys.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.support.constants import LABEL_HOST, READY
from tests.support.docker import docker, inspect, running_hosts, session_objects

from .support import EventStream, call, jp_async, ok_http, stream_url, wait_status

pytestmark = pytest.mark.docker

#: Seconds between the server's reconciliations with Docker in these tests.
RECONCILE_INTERVAL = 0.5
#: A size-3 session of small containers, as a REST launch body.
SIZE3 = {"size": 3, "cpu": 0.5, "mem": "512m"}


@pytest.fixture
def cluster_config() -> dict[str, Any]:
    """Reconcile with Docker often, so a dead container is noticed within a second."""
    return {"ClusterApp": {"reconcile_interval": RECONCILE_INTERVAL}}


@pytest.fixture
def events_url(jp_http_port: int, jp_base_url: str) -> Any:
    """The URL of the extension's events stream."""
    return stream_url(jp_http_port, jp_base_url, "cluster", "api", "events")


def container_of(session_id: str, host: str) -> str:
    """The id of ``host``'s container in the session, per Docker (by its labels)."""
    containers, _ = session_objects(session_id)
    ids = [c["Id"] for c in inspect(*containers) if c["Config"]["Labels"][LABEL_HOST] == host]
    assert len(ids) == 1, f"Docker has {len(ids)} containers for {host} of {session_id}"
    return ids[0]


@jp_async
async def test_a_killed_sub1_degrades_the_session_and_terminate_cleans_up(
    jp_fetch: Any, jp_auth_header: Any, events_url: Any, cluster: Any
) -> None:
    store = cluster.engine.store
    async with EventStream(events_url, jp_auth_header) as events:
        sid = (await ok_http(jp_fetch, "sessions", method="POST", body=SIZE3))["id"]
        await wait_status(jp_fetch, sid, "RUNNING")
        assert running_hosts(sid) == {"main1": True, "sub1": True, "sub2": True}
        assert store.load_keys(sid), "a running session has its key material in the store"
        # The stream polls the store: once it said RUNNING, the next change it
        # reports is from RUNNING (a kill within one poll would skip it).
        await events.session(sid, "RUNNING")

        docker("kill", container_of(sid, "sub1"))
        degraded = await wait_status(jp_fetch, sid, "RUNNING_DEGRADED", timeout=15)
        # the reason says how it ended and when (docker kill: SIGKILL)
        killed = re.compile(
            r"was killed by signal 9 \(exit code 137\) at \d{4}-\d\d-\d\dT[\d:]{8}Z"
        )
        assert killed.fullmatch(degraded["status_reason"].removeprefix("sub1 ")), degraded
        hosts = {c["host"]: (c["status"], c["status_reason"]) for c in degraded["containers"]}
        assert hosts["main1"] == ("RUNNING", "") and hosts["sub2"] == ("RUNNING", "")
        assert hosts["sub1"] == ("EXITED", degraded["status_reason"].removeprefix("sub1 "))
        assert running_hosts(sid) == {"main1": True, "sub1": False, "sub2": True}

        event = await events.session(sid, "RUNNING_DEGRADED")
        assert event["previous_status"] == "RUNNING"
        assert event["session"]["status_reason"] == degraded["status_reason"]
        assert (await events.container(sid, "sub1", "EXITED"))["previous_status"] == "RUNNING"

        # The dead container's log is still there, start-up output included.
        log = await ok_http(jp_fetch, "sessions", sid, "containers", "sub1", "logs")
        assert READY in log, log

        code, _, _ = await call(jp_fetch, "sessions", sid, method="DELETE")
        assert code == 204
        ended = await ok_http(jp_fetch, "sessions", sid)
        assert ended["status"] == "TERMINATED", ended
        assert {c["status"] for c in ended["containers"]} == {"TERMINATED"}
        await events.session(sid, "TERMINATED")
    assert session_objects(sid) == ([], [])
    assert store.load_keys(sid) is None
