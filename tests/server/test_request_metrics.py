"""``ClusterApp.record_request_metrics = False`` keeps requests out of ``/metrics``.

The shared service sets it, since any Hub user may read its ``/metrics``: the
per-handler ``http_request_duration_seconds`` counts would show other users'
requests (review X14). jupyter_server's own switch cannot be set from config, so
the extension replaces the server's request logger. The prometheus registry is
one per process, so the test compares a handler's count before and after.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from .support import jp_async, ok_http

pytestmark = pytest.mark.docker
COUNT = re.compile(r"^http_request_duration_seconds_count\{(?P<labels>[^}]*)\} (?P<n>\S+)$", re.M)


@pytest.fixture
def cluster_config() -> dict[str, Any]:
    return {"ClusterApp": {"record_request_metrics": False}}


async def _counts(jp_fetch: Any) -> dict[str, float]:
    text = (await jp_fetch("metrics")).body.decode()
    return {m["labels"]: float(m["n"]) for m in COUNT.finditer(text)}


@jp_async
async def test_requests_are_not_counted_in_metrics(jp_fetch: Any, cluster: Any) -> None:
    before = await _counts(jp_fetch)
    for _ in range(3):
        await ok_http(jp_fetch, "sessions")
        await jp_fetch("api", "status")
    after = await _counts(jp_fetch)
    grown = {k: v - before.get(k, 0) for k, v in after.items() if v != before.get(k, 0)}
    assert grown == {}, grown
    assert cluster.serverapp.web_app.settings["log_function"].keywords == {
        "record_prometheus_metrics": False
    }
