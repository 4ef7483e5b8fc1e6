"""An out-of-memory kill inside a running container, seen through a real server (#14
item 2): the server's OOM watch records it, and the REST session model and the
events stream both carry sub1's reason while sub1 and its session run on."""

from __future__ import annotations

from typing import Any

import pytest

from jupyter_cluster.engine.oom_watch import OomWatch

from .support import EventStream, jp_async, ok_http, stream_url, wait_status

pytestmark = pytest.mark.docker
GROW = "a = bytearray(1024 * 2**20)"  # 1 GiB, in a container limited to 256m
OOM = "a process was killed by the out-of-memory killer"


@jp_async
async def test_an_oom_kill_shows_in_rest_and_in_the_events(
    jp_fetch: Any, jp_http_port: int, jp_base_url: str, jp_auth_header: Any, cluster: Any
) -> None:
    events_url = stream_url(jp_http_port, jp_base_url, "cluster", "api", "events")
    async with EventStream(events_url, jp_auth_header) as events:
        sid = (await ok_http(jp_fetch, "sessions", method="POST", body={"size": 2}))["id"]
        await wait_status(jp_fetch, sid, "RUNNING")
        assert any(isinstance(job, OomWatch) for job in cluster.service.upkeep)  # started
        code = await cluster.engine.exec(sid, "sub1", ["python3", "-c", GROW])
        assert code == 137

        event = await events.wait_for(
            lambda n, d: n == "container" and d["host"] == "sub1" and OOM in d["status_reason"],
            30,
            "sub1's OOM reason",
        )
        assert event["session_id"] == sid and event["status"] == "RUNNING"
        assert "memory limit (256m)" in event["status_reason"]

        model = await ok_http(jp_fetch, "sessions", sid)
        assert model["status"] == "RUNNING"
        hosts = {c["host"]: c for c in model["containers"]}
        assert hosts["sub1"]["status_reason"] == event["status_reason"]
        assert hosts["sub1"]["oom_kills"] == 1 and hosts["sub1"]["oom_killed_at"] > 0
        assert (hosts["main1"]["oom_kills"], hosts["main1"]["status_reason"]) == (0, "")
        assert not any(
            n == "container" and d["host"] == "main1" and d["status_reason"]
            for n, d in events.events
        )
        await ok_http(jp_fetch, "sessions", sid, method="DELETE")
