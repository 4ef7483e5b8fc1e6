"""Terminals of the server's own terminal service inside session containers.

main1 is entered with ``docker exec``; sub containers through main1 (SSH jump via
main1's published port, strict host-key checking, keys in a private directory
removed when the session ends). The terminal's websocket is the stock
``/terminals/websocket/{name}``, as JupyterLab uses it.
"""

from __future__ import annotations

import os
import stat
from typing import Any

import pytest

from .support import call, jp_async, ok_http, terminal_line, wait_status

pytestmark = pytest.mark.docker


@jp_async
async def test_terminal_round_trip_into_main1_and_sub1(
    jp_fetch: Any, jp_ws_fetch: Any, jp_base_url: str, cluster: Any
) -> None:
    session = await ok_http(jp_fetch, "sessions", method="POST", body={"size": 2})
    sid = session["id"]
    await wait_status(jp_fetch, sid, "RUNNING")
    names = {}
    for host in ("main1", "sub1"):
        code, terminal, response = await call(
            jp_fetch, "sessions", sid, "containers", host, "terminals", method="POST"
        )
        assert code == 201, terminal
        assert terminal["host"] == host and terminal["session_id"] == sid
        name = names[host] = terminal["name"]
        assert name == f"cluster_{host}_{sid.replace('-', '')[:12]}_1", name
        assert response.headers["Location"] == f"{jp_base_url}api/terminals/{name}"
        ws = await jp_ws_fetch("terminals", "websocket", name)
        try:
            await terminal_line(ws, "hostname", host)
            await terminal_line(ws, "whoami", "work")
            await terminal_line(ws, "echo $BACKENDAI_CLUSTER_HOST", host)
        finally:
            ws.close()
    listed = {t["name"] for t in await ok_http(jp_fetch, "api", "terminals", base=())}
    assert set(names.values()) <= listed

    key_dir = cluster.service.terminals.key_dir(sid)
    assert stat.S_IMODE(os.stat(key_dir).st_mode) == 0o700
    for entry in os.listdir(key_dir):
        assert stat.S_IMODE(os.stat(os.path.join(key_dir, entry)).st_mode) == 0o600

    code, data, _ = await call(
        jp_fetch, "sessions", sid, "containers", "sub9", "terminals", method="POST"
    )
    assert code == 404 and "main1, sub1" in data["message"]

    await ok_http(jp_fetch, "sessions", sid, method="DELETE")
    listed = {t["name"] for t in await ok_http(jp_fetch, "api", "terminals", base=())}
    assert not set(names.values()) & listed
    assert not os.path.exists(key_dir)
    code, data, _ = await call(
        jp_fetch, "sessions", sid, "containers", "main1", "terminals", method="POST"
    )
    assert code == 409, data

    # Lab reopens a tab by name: for a name not running it POSTs /api/terminals with
    # it. An ended cluster terminal's name gets no shell on the server's host.
    for name in (names["sub1"], "cluster_main1_0123456789ab_7"):
        code, data, _ = await call(
            jp_fetch, "api", "terminals", method="POST", body={"name": name}, base=()
        )
        assert code == 409, (name, code, data)
        assert data["message"].startswith(f"{name} was a terminal into ")
        assert "open a new one from the session's row" in data["message"]
    listed = {t["name"] for t in await ok_http(jp_fetch, "api", "terminals", base=())}
    assert not set(names.values()) & listed and "cluster_main1_0123456789ab_7" not in listed
    # plain terminals, numbered or named, are the terminal service's as before
    for body in ({}, {"name": "mine"}):
        plain = await ok_http(jp_fetch, "api", "terminals", method="POST", body=body, base=())
        assert plain["name"] == body.get("name", plain["name"]) and plain["name"].isalnum()
        await ok_http(jp_fetch, "api", "terminals", plain["name"], method="DELETE", base=())


@jp_async
async def test_a_fresh_server_gives_no_plain_terminal_a_cluster_name(
    jp_fetch: Any, cluster: Any
) -> None:
    """Lab restores tabs as soon as the server is up: before any cluster terminal was
    made here, a restored cluster terminal's name already gets no host shell."""
    assert await ok_http(jp_fetch, "api", "terminals", base=()) == []  # none made yet
    name = "cluster_sub2_0123456789ab_3"
    code, data, _ = await call(
        jp_fetch, "api", "terminals", method="POST", body={"name": name}, base=()
    )
    assert code == 409 and data["message"].startswith(f"{name} was a terminal into sub2"), data
    assert await ok_http(jp_fetch, "api", "terminals", base=()) == []
