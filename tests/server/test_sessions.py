"""Sessions through REST against real Docker: launch, follow, list, logs, terminate.

A launch returns 201 at once (PENDING or PREPARING) and is driven in the
background; its progress shows in GET and in the events stream. REST and the CLI
share one store: each sees the other's sessions.
"""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any

import pytest

from tests.support.constants import CLI, READY, SMALL_FLAGS
from tests.support.docker import running_hosts, session_objects, session_volumes
from tests.support.waiting import eventually

from .support import EventStream, call, jp_async, ok_http, stream_url, wait_status

pytestmark = pytest.mark.docker


async def cli(*args: str) -> tuple[int, str, str]:
    """``jupyter cluster ARGS`` in a subprocess with this test's Jupyter environment."""
    proc = await asyncio.create_subprocess_exec(
        *CLI,
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=dict(os.environ),
    )
    out, err = await asyncio.wait_for(proc.communicate(), 120)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


@pytest.fixture
def events_url(jp_http_port: int, jp_base_url: str) -> Any:
    return stream_url(jp_http_port, jp_base_url, "cluster", "api", "events")


@jp_async
async def test_launch_list_logs_terminate(
    jp_fetch: Any, jp_base_url: str, jp_auth_header: Any, events_url: Any, cluster: Any
) -> None:
    async with EventStream(events_url, jp_auth_header) as events:
        code, session, response = await call(
            jp_fetch, "sessions", method="POST", body={"size": 2, "name": "rest-one"}
        )
        assert code == 201, session
        sid = session["id"]
        assert response.headers["Location"] == f"{jp_base_url}cluster/api/sessions/{sid}"
        assert session["status"] in ("PENDING", "PREPARING")
        assert session["name"] == "rest-one" and session["size"] == 2
        assert session["resources"]["cpu"] == 0.25  # the configured default
        assert session["kernel_id"] is None and session["kernel_state"] is None

        running = await wait_status(jp_fetch, sid, "RUNNING")
        assert [c["status"] for c in running["containers"]] == ["RUNNING", "RUNNING"]
        assert running_hosts(sid) == {"main1": True, "sub1": True}
        assert running["owner"]
        for host in ("main1", "sub1"):
            await events.container(sid, host, "RUNNING")
        await events.session(sid, "RUNNING")

        # Same session through the Location, by name, in the list and in the CLI.
        assert (await ok_http(jp_fetch, "sessions", "rest-one"))["id"] == sid
        assert [s["id"] for s in await ok_http(jp_fetch, "sessions")] == [sid]
        code, out, err = await cli("ls", "--json")
        assert code == 0, err
        assert [(s["id"], s["status"]) for s in json.loads(out)] == [(sid, "RUNNING")]

        log = await ok_http(jp_fetch, "sessions", sid, "containers", "sub1", "logs")
        assert READY in log
        tail = await ok_http(
            jp_fetch, "sessions", sid, "containers", "main1", "logs", params={"tail": "1"}
        )
        assert tail.count("\n") == 1
        code, data, _ = await call(jp_fetch, "sessions", sid, "containers", "sub7", "logs")
        assert code == 404 and "main1, sub1" in data["message"]

        code, _, response = await call(jp_fetch, "sessions", sid, method="DELETE")
        assert code == 204 and not response.body
        ended = await ok_http(jp_fetch, "sessions", sid)
        assert ended["status"] == "TERMINATED"
        assert running_hosts(sid) == {}
        # the logs outlive the containers: the copy kept at termination is served
        kept = await ok_http(jp_fetch, "sessions", sid, "containers", "sub1", "logs")
        assert READY in kept and kept.endswith(log[-200:])
        followed = await ok_http(
            jp_fetch, "sessions", sid, "containers", "sub1", "logs", params={"follow": "1"}
        )
        assert followed == kept  # follow ends at once: nothing more will come
        await events.session(sid, "TERMINATED")
    hub = cluster.service.hub
    await eventually(lambda: asyncio.sleep(0, hub.subscriber_count == 0), 10, "no subscribers")
    assert await ok_http(jp_fetch, "sessions") == []
    assert [s["id"] for s in await ok_http(jp_fetch, "sessions", params={"all": "1"})] == [sid]
    code, _, _ = await call(jp_fetch, "sessions", sid, method="DELETE")
    assert code == 204  # terminating an ended session again is fine


@jp_async
async def test_cli_and_rest_see_each_others_sessions(
    jp_fetch: Any, jp_auth_header: Any, events_url: Any, cluster: Any
) -> None:
    async with EventStream(events_url, jp_auth_header) as events:
        code, out, err = await cli("launch", *SMALL_FLAGS, "--json")
        assert code == 0, err
        sid = json.loads(out)["id"]
        listed = await ok_http(jp_fetch, "sessions")
        assert [(s["id"], s["status"]) for s in listed] == [(sid, "RUNNING")]
        # The poller notices sessions made by other processes.
        await events.session(sid, "RUNNING")
        await ok_http(jp_fetch, "sessions", sid, method="DELETE")
        code, out, err = await cli("ls", "--all", "--json")
        assert code == 0, err
        assert [(s["id"], s["status"]) for s in json.loads(out)] == [(sid, "TERMINATED")]

        rest = await ok_http(jp_fetch, "sessions", method="POST", body={"name": "from-rest"})
        await wait_status(jp_fetch, rest["id"], "RUNNING")
        code, out, err = await cli("rm", "from-rest")
        assert code == 0, err
        await events.session(rest["id"], "TERMINATED")


@jp_async
async def test_a_failed_launch_shows_error_and_delete_right_away(
    jp_fetch: Any, jp_auth_header: Any, events_url: Any, cluster: Any
) -> None:
    async with EventStream(events_url, jp_auth_header) as events:
        body = {"size": 2, "bootstrap": "echo bootstrapping; exit 3", "start_kernel": True}
        failing = await ok_http(jp_fetch, "sessions", method="POST", body=body)
        ended = await wait_status(jp_fetch, failing["id"], "ERROR")
        assert "exit code 3" in ended["status_reason"], ended
        assert ended["kernel_state"] == "failed" and ended["kernel_reason"]
        await events.session(failing["id"], "ERROR")
        assert running_hosts(failing["id"]) == {}
        await ok_http(jp_fetch, "sessions", failing["id"], method="DELETE")

    # Terminated while it is still being launched, at any point: nothing is left behind.
    for delay in (0, 0.05, 0.15, 0.3, 0.6):
        hasty = await ok_http(jp_fetch, "sessions", method="POST", body={"size": 2})
        await asyncio.sleep(delay)
        await ok_http(jp_fetch, "sessions", hasty["id"], method="DELETE")
        final = await ok_http(jp_fetch, "sessions", hasty["id"])
        assert final["status"] in ("CANCELLED", "TERMINATED"), final
        assert session_objects(hasty["id"]) == ([], []), delay


@jp_async
async def test_a_lab_delete_while_rm_runs_in_a_terminal_both_end_it_and_leave_nothing(
    jp_fetch: Any, cluster: Any
) -> None:
    """The Lab's delete of a session (a DELETE) while ``jupyter cluster rm`` of it runs
    in a terminal: one waits for the other (the session's lock), both succeed, and
    nothing is left. Sessions of four containers have the start-up files' volume,
    where two removals at once tripped ("volume is in use"); the DELETE comes at a
    few moments of the ``rm``'s run."""
    for delay in (0.2, 0.5, 0.8):
        session = await ok_http(jp_fetch, "sessions", method="POST", body={"size": 4})
        await wait_status(jp_fetch, session["id"], "RUNNING")
        removing = asyncio.ensure_future(cli("rm", session["id"]))
        await asyncio.sleep(delay)  # the CLI's Python is starting, or removing
        code, _, _ = await call(jp_fetch, "sessions", session["id"], method="DELETE")
        assert code == 204, delay
        code, out, err = await removing
        assert code == 0, (delay, out, err)
        assert f"{session['id']}: TERMINATED" in out, (delay, out, err)
        assert "WARNING" not in err and "could not" not in err, (delay, err)
        ended = await ok_http(jp_fetch, "sessions", session["id"])
        assert (ended["status"], ended["status_reason"]) == ("TERMINATED", "terminated"), ended
        assert session_objects(session["id"]) == ([], []), delay
        assert session_volumes(session["id"]) == [], delay
