"""Batch sessions and time limits through a real Jupyter server (#25 items 1, 2): a
REST launch with ``command`` runs in main1, driven by the server's batch upkeep, and
ends by itself failed with the command's code, its output kept in main1's log and
an event saying so; a session with ``max_lifetime`` gets a warning event, then ends
with the lifetime's reason; bad fields are a 400 naming the field."""

from __future__ import annotations

from typing import Any

import pytest

from jupyter_cluster.engine.batch import BatchUpkeep

from .support import EventStream, call, jp_async, ok_http, stream_url, wait_status

pytestmark = pytest.mark.docker


@pytest.fixture
def cluster_config() -> dict[str, Any]:
    return {"ClusterManager": {"job_poll_interval": 0.25}}


@jp_async
async def test_a_rest_batch_job_ends_its_session_with_the_result_and_an_event(
    jp_fetch: Any, jp_http_port: int, jp_base_url: str, jp_auth_header: Any, cluster: Any
) -> None:
    events_url = stream_url(jp_http_port, jp_base_url, "cluster", "api", "events")
    async with EventStream(events_url, jp_auth_header) as events:
        body = {"size": 2, "command": "echo batch-says-$BACKENDAI_CLUSTER_SIZE; exit 4"}
        sid = (await ok_http(jp_fetch, "sessions", method="POST", body=body))["id"]
        done = await wait_status(jp_fetch, sid, "TERMINATED", timeout=120)
        assert any(isinstance(job, BatchUpkeep) for job in cluster.service.upkeep)  # it ran it
        assert done["status_reason"] == "batch job failed with exit code 4", done
        assert done["command"] == body["command"]
        job = done["job"]
        assert (job["state"], job["exit_code"], len(job["tries"])) == ("failed", 4, 1), job
        event = await events.wait_for(
            lambda n, d: n == "session" and d["session_id"] == sid and d["status"] == "TERMINATED",
            30,
            "the session's end",
        )
        assert event["session"]["status_reason"] == "batch job failed with exit code 4"
    log = await ok_http(jp_fetch, "sessions", sid, "containers", "main1", "logs")
    assert "batch-says-2" in log, log


@jp_async
async def test_a_session_past_its_lifetime_is_warned_then_ended(
    jp_fetch: Any, jp_http_port: int, jp_base_url: str, jp_auth_header: Any, cluster: Any
) -> None:
    events_url = stream_url(jp_http_port, jp_base_url, "cluster", "api", "events")
    async with EventStream(events_url, jp_auth_header) as events:
        body = {"max_lifetime": "6s"}  # an interactive session: the server's upkeep ends it
        sid = (await ok_http(jp_fetch, "sessions", method="POST", body=body))["id"]
        warned = await events.wait_for(
            lambda n, d: (
                n == "session"
                and d["session_id"] == sid
                and d["session"]["status_reason"].startswith(
                    "will reach its maximum lifetime of 6s"
                )
            ),
            60,
            "the lifetime warning",
        )
        assert warned["status"] == "RUNNING"
        done = await wait_status(jp_fetch, sid, "TERMINATED", timeout=60)
        assert done["status_reason"] == "reached its maximum lifetime of 6s"
        assert done["max_lifetime"] == 6.0 and done["job"] is None


@jp_async
async def test_bad_batch_fields_are_refused_naming_the_field(jp_fetch: Any, cluster: Any) -> None:
    for body, field in (
        ({"command": "true", "retries": 11}, "retries"),
        ({"max_lifetime": "a while"}, "max_lifetime"),
        ({"command": ["ls"]}, "command"),
    ):
        code, data, _ = await call(jp_fetch, "sessions", method="POST", body=body)
        assert (code, data["field"]) == (400, field), (body, data)
    assert await ok_http(jp_fetch, "sessions") == []
