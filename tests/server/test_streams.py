"""Following a container's log: new lines stream until the client goes away or the
container ends.
"""

from __future__ import annotations

import asyncio
from typing import Any

import aiohttp
import pytest

from tests.support.waiting import eventually

from .support import jp_async, ok_http, stream_url, wait_status

pytestmark = pytest.mark.docker
FIFO = "/opt/jupyter-cluster/run/log.fifo"  # what work writes there lands in the log


async def read_until(response: aiohttp.ClientResponse, text: str, timeout: float = 20) -> str:
    seen = ""

    async def read() -> None:
        nonlocal seen
        while text not in seen:
            line = await response.content.readline()
            if not line:
                pytest.fail(f"the log stream ended before {text!r}; it had {seen!r}")
            seen += line.decode()

    await asyncio.wait_for(read(), timeout)
    return seen


@jp_async
async def test_log_follow(
    jp_fetch: Any, jp_http_port: int, jp_base_url: str, jp_auth_header: Any, cluster: Any
) -> None:
    session = await ok_http(jp_fetch, "sessions", method="POST", body={"size": 2})
    sid = session["id"]
    await wait_status(jp_fetch, sid, "RUNNING")
    service, manager = cluster.service, cluster.engine
    url = stream_url(
        jp_http_port, jp_base_url, "cluster", "api", "sessions", sid, "containers", "sub1", "logs",
        query="tail=1&follow=1",
    )  # fmt: skip
    async with aiohttp.ClientSession() as http:
        leaving = await http.get(url, headers=jp_auth_header)
        staying = await http.get(url, headers=jp_auth_header)
        assert staying.status == 200
        assert staying.headers["Content-Type"].startswith("text/plain")
        await read_until(staying, "\n")  # the last line so far
        await eventually(
            lambda: asyncio.sleep(0, service.active_streams == 2), 10, "two log streams"
        )
        # A client that goes away ends its stream on the server.
        leaving.close()
        await eventually(
            lambda: asyncio.sleep(0, service.active_streams == 1), 10, "the stream to end"
        )

        for n in (1, 2):
            code = await manager.exec(sid, "sub1", ["sh", "-c", f"echo marker-{n} > {FIFO}"])
            assert code == 0
            await read_until(staying, f"marker-{n}\n")

        # The container ends: the stream ends too.
        await ok_http(jp_fetch, "sessions", sid, method="DELETE")
        rest = await asyncio.wait_for(staying.content.read(), 20)
        assert staying.content.at_eof(), rest
    await eventually(lambda: asyncio.sleep(0, service.active_streams == 0), 10, "no streams")


@jp_async
async def test_stats_follow_streams_samples_while_someone_listens(
    jp_fetch: Any, jp_http_port: int, jp_base_url: str, jp_auth_header: Any, cluster: Any
) -> None:
    """#14 item 1: one sample, then a stream of samples that stops with its client."""
    sid = (await ok_http(jp_fetch, "sessions", method="POST", body={"size": 2}))["id"]
    await wait_status(jp_fetch, sid, "RUNNING")
    one = await ok_http(jp_fetch, "sessions", sid, "stats")
    assert set(one["hosts"]) == {"main1", "sub1"}
    assert all(h["mem_limit"] > 0 and h["pids"] >= 1 for h in one["hosts"].values())
    service = cluster.service
    url = stream_url(
        jp_http_port, jp_base_url, "cluster", "api", "sessions", sid, "stats", query="follow=1"
    )
    async with aiohttp.ClientSession() as http:
        stream = await http.get(url, headers=jp_auth_header)
        assert stream.headers["Content-Type"].startswith("text/event-stream")
        for _ in range(2):
            seen = await read_until(stream, "\n\n", timeout=30)
            assert seen.startswith("event: stats\ndata: {") and '"sub1"' in seen, seen
        assert service.active_streams == 1
        stream.close()  # nobody listens: the server stops reading the agents
        await eventually(
            lambda: asyncio.sleep(0, service.active_streams == 0), 10, "the stream to end"
        )
    await ok_http(jp_fetch, "sessions", sid, method="DELETE")
    code = (await jp_fetch("cluster", "api", "sessions", sid, "stats", raise_error=False)).code
    assert code == 409  # an ended session has no use to read
