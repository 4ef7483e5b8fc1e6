"""Launch variables through REST (``env``) against real Docker: refused names get a 400
naming ``env``; accepted ones reach terminals into main1 (``docker exec``) and sub1
(SSH through main1), while GET sessions, the events stream, container logs and the
server's log show their names only, never a value."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest

from tests.support.docker import manager_objects

from .support import EventStream, call, jp_async, ok_http, stream_url, terminal_line, wait_status

pytestmark = pytest.mark.docker
SECRET = "tok-3f9a1c-launch-env"


@pytest.fixture
def events_url(jp_http_port: int, jp_base_url: str) -> Any:
    return stream_url(jp_http_port, jp_base_url, "cluster", "api", "events")


@jp_async
async def test_reserved_and_malformed_variables_get_400_naming_env(
    jp_fetch: Any, cluster: Any
) -> None:
    for env in (
        {"PATH": SECRET},
        {"BACKENDAI_CLUSTER_HOST": SECRET},
        {"JC_HANDOFF": SECRET},
        {"1BAD": SECRET},
        {"A": f"{SECRET}\nB=1"},
        {"A": 1},
        [f"A={SECRET}"],
        "A=1",
    ):
        code, data, _ = await call(jp_fetch, "sessions", method="POST", body={"env": env})
        assert code == 400, (env, code, data)
        assert data["field"] == "env" and data["message"].startswith("env: "), data
        assert SECRET not in json.dumps(data)
    assert (
        "PATH is set by jupyter-cluster itself"
        in (await call(jp_fetch, "sessions", method="POST", body={"env": {"PATH": "x"}}))[1][
            "message"
        ]
    )
    assert cluster.engine.store.list(include_ended=True) == []
    assert manager_objects(cluster.engine.store.manager_id) == ([], [])


@jp_async
async def test_variables_reach_terminals_and_are_shown_by_name_only(
    jp_fetch: Any,
    jp_ws_fetch: Any,
    jp_auth_header: Any,
    events_url: Any,
    cluster: Any,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    async with EventStream(events_url, jp_auth_header) as events:
        body = {"size": 2, "env": {"MY_TOKEN": SECRET, "EMPTY": ""}}
        created = await ok_http(jp_fetch, "sessions", method="POST", body=body)
        sid = created["id"]
        assert created["env"] == ["MY_TOKEN", "EMPTY"]
        await wait_status(jp_fetch, sid, "RUNNING")
        await events.session(sid, "RUNNING")
        for host in ("main1", "sub1"):
            code, terminal, _ = await call(
                jp_fetch, "sessions", sid, "containers", host, "terminals", method="POST"
            )
            assert code == 201, terminal
            ws = await jp_ws_fetch("terminals", "websocket", terminal["name"])
            try:
                await terminal_line(ws, 'echo "[$MY_TOKEN]"', f"[{SECRET}]")
                await terminal_line(ws, 'echo "${EMPTY-unset}."', ".")
            finally:
                ws.close()
        shown = await ok_http(jp_fetch, "sessions", sid)
        assert shown["env"] == ["MY_TOKEN", "EMPTY"]
        listed = await ok_http(jp_fetch, "sessions")
        logs = [
            await ok_http(jp_fetch, "sessions", sid, "containers", host, "logs")
            for host in ("main1", "sub1")
        ]
        await ok_http(jp_fetch, "sessions", sid, method="DELETE")
        await events.session(sid, "TERMINATED")
        history = await ok_http(jp_fetch, "sessions", params={"all": "1"})
        seen = json.dumps([shown, listed, history, events.events])
    assert "MY_TOKEN" in seen
    assert SECRET not in seen
    assert not any(SECRET in log for log in logs)
    assert "of session" in caplog.text  # the server's own log lines were captured
    assert SECRET not in caplog.text
