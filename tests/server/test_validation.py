"""Bad input gets 400 naming the field (404 for unknown sessions); nothing is created.

Limits here: max_size 3, max_cpu 1, max_mem 512m, max_shm 128m, max_gpu 0; one data
folder ``data`` exists. After every refused request the store is empty and Docker
has nothing of this server's manager.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.docker import manager_objects

from .support import call, jp_async

pytestmark = pytest.mark.docker


@pytest.fixture
def cluster_config() -> dict[str, Any]:
    return {
        "ClusterApp": {"max_cpu": 1.0, "max_mem": "512m", "max_shm": "128m", "max_gpu": 0},
        "ClusterManager": {"max_size": 3},
    }


BAD_BODIES: list[tuple[Any, str]] = [
    ('{"size": ', "body"),
    ("", "body"),
    ("[1, 2]", "body"),
    ('"text"', "body"),
    ("\xff\xfe", "body"),
    ("[" * 100000, "body"),
    ({"sizes": 2}, "sizes"),
    ({"size": 1, "kernel": True}, "kernel"),
    ({"size": "2"}, "size"),
    ({"size": 1.5}, "size"),
    ({"size": True}, "size"),
    ({"size": None}, "size"),
    ({"size": 0}, "size"),
    ({"size": 4}, "size"),
    ({"size": 10**30}, "size"),
    ({"mode": "both"}, "mode"),
    ({"mode": 1}, "mode"),
    ({"cpu": 0}, "cpu"),
    ({"cpu": -1}, "cpu"),
    ({"cpu": 2}, "cpu"),
    ({"cpu": "lots"}, "cpu"),
    ({"cpu": [1]}, "cpu"),
    ({"cpu": False}, "cpu"),
    ('{"cpu": NaN}', "cpu"),
    ('{"cpu": Infinity}', "cpu"),
    ({"mem": "1m"}, "mem"),
    ({"mem": "1g"}, "mem"),
    ({"mem": "big"}, "mem"),
    ({"mem": {}}, "mem"),
    ({"mem": -5}, "mem"),
    ({"shm": 0}, "shm"),
    ({"shm": "1g"}, "shm"),
    ({"gpu": 1}, "gpu"),
    ({"gpu": -1}, "gpu"),
    ({"gpu": "one"}, "gpu"),
    ({"image": "alpine:3"}, "image"),
    ({"image": 7}, "image"),
    ({"image": ""}, "image"),
    ({"mounts": "data"}, "mounts"),
    ({"mounts": ["nosuch"]}, "mounts"),
    ({"mounts": ["../etc"]}, "mounts"),
    ({"mounts": ["data:rx"]}, "mounts"),
    ({"mounts": ["data", "data"]}, "mounts"),
    ({"mounts": [1]}, "mounts"),
    ({"resource_group": "gpu"}, "resource_group"),
    ({"resource_group": ""}, "resource_group"),
    ({"resource_group": None}, "resource_group"),
    ({"name": "two words"}, "name"),
    ({"name": 5}, "name"),
    ({"name": "x" * 65}, "name"),
    ({"bootstrap": ["echo"]}, "bootstrap"),
    ({"bootstrap": "echo \x00"}, "bootstrap"),
    ('{"bootstrap": "\\ud800"}', "bootstrap"),
    ({"bootstrap": "x" * 70000}, "bootstrap"),
    ({"start_kernel": "yes"}, "start_kernel"),
    ({"start_kernel": 1}, "start_kernel"),
]


@jp_async
async def test_bad_launch_requests_get_400_naming_the_field(jp_fetch: Any, cluster: Any) -> None:
    cluster.engine.folders_for("").create("data")
    for body, field in BAD_BODIES:
        code, data, _ = await call(jp_fetch, "sessions", method="POST", body=body)
        assert code == 400, (body, code, data)
        assert data["field"] == field, (body, data)
        assert data["message"], body
    assert cluster.engine.store.list(include_ended=True) == []
    assert manager_objects(cluster.engine.store.manager_id) == ([], [])


@jp_async
async def test_bad_queries_get_400_and_unknown_names_404(jp_fetch: Any, cluster: Any) -> None:
    logs = ("sessions", "nosuch", "containers", "main1", "logs")
    cases: list[tuple[tuple[str, ...], dict[str, str], str, int, str | None]] = [
        (("sessions",), {"all": "maybe"}, "GET", 400, "all"),
        (("sessions", "nosuch"), {}, "GET", 404, None),
        (("sessions", "nosuch"), {}, "DELETE", 404, None),
        (logs, {}, "GET", 404, None),
        (logs, {"tail": "x"}, "GET", 400, "tail"),
        (logs, {"tail": "-1"}, "GET", 400, "tail"),
        (logs, {"tail": "1e3"}, "GET", 400, "tail"),
        (logs, {"follow": "2"}, "GET", 400, "follow"),
        (("sessions", "nosuch", "containers", "main1", "terminals"), {}, "POST", 404, None),
        (("sessions", "\u00e9\u20ac"), {}, "GET", 404, None),
    ]
    for path, params, method, status, field in cases:
        code, data, _ = await call(jp_fetch, *path, method=method, params=params)
        assert code == status, (path, params, method, code, data)
        assert data["field"] == field, (path, data)
    assert cluster.engine.store.list(include_ended=True) == []
