"""Live streams are capped per user, so one user's open log and stats streams cannot
take the Docker connections everyone's launches need (security review X8).

With ``max_streams_per_user = 2``: two followed logs stream; a third stream, log or
stats, is refused with 429 and a message that says what to do; a launch still
works meanwhile; once one stream ends, a new one is served.
"""

from __future__ import annotations

import asyncio
from typing import Any

import aiohttp
import pytest

from tests.support.waiting import eventually

from .support import jp_async, ok_http, stream_url, wait_status

pytestmark = pytest.mark.docker


@pytest.fixture
def cluster_config() -> dict[str, Any]:
    return {"ClusterApp": {"max_streams_per_user": 2}}


@jp_async
async def test_a_user_over_the_stream_cap_gets_429_and_launches_still_work(
    jp_fetch: Any, jp_http_port: int, jp_base_url: str, jp_auth_header: Any, cluster: Any
) -> None:
    session = await ok_http(jp_fetch, "sessions", method="POST", body={})
    sid = session["id"]
    await wait_status(jp_fetch, sid, "RUNNING")
    base = ("cluster", "api", "sessions", sid)
    logs = stream_url(jp_http_port, jp_base_url, *base, "containers", "main1", "logs",
                      query="tail=1&follow=1")  # fmt: skip
    stats = stream_url(jp_http_port, jp_base_url, *base, "stats", query="follow=1")
    service = cluster.service
    async with aiohttp.ClientSession() as http:
        first = await http.get(logs, headers=jp_auth_header)
        second = await http.get(logs, headers=jp_auth_header)
        assert (first.status, second.status) == (200, 200)
        await eventually(lambda: asyncio.sleep(0, service.active_streams == 2), 10, "two streams")
        for url in (logs, stats):
            refused = await http.get(url, headers=jp_auth_header)
            body = await refused.json()
            assert refused.status == 429, body
            assert "max_streams_per_user" in body["message"] and "close some" in body["message"]
        assert service.active_streams == 2
        other = await ok_http(jp_fetch, "sessions", method="POST", body={})
        await wait_status(jp_fetch, other["id"], "RUNNING")
        first.close()
        await eventually(
            lambda: asyncio.sleep(0, service.active_streams == 1), 10, "the stream to end"
        )
        again = await http.get(stats, headers=jp_auth_header)
        assert again.status == 200
        again.close()
        second.close()
    await eventually(lambda: asyncio.sleep(0, service.active_streams == 0), 10, "no streams")
