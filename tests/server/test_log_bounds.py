"""Floods of log output cannot hurt the server (issue #11, item 4).

A real ``jupyter server`` subprocess (so its memory is its own) launches sessions
whose start-up prints a million lines and a line of 100 MB with no newline in it.
The server follows that output while it waits for "ready", then serves the whole
log over REST. Throughout:

- the server's peak resident memory (``VmHWM``) grows by less than
  :data:`MEMORY_BOUND`, a small fraction of the log, because a long line is
  handled in 64 KiB pieces and a whole log is streamed in 64 KiB writes;
- its event loop keeps answering: ``GET api/status`` every 0.1 s never takes
  :data:`LATENCY_BOUND` or longer;
- a launch that fails after such output stores a bounded reason (the last lines,
  each cut short), so ``GET sessions`` stays small.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest
from tornado.httpclient import HTTPRequest

from tests.support.constants import SMALL_BODY
from tests.support.waiting import eventually

from .support import Server, jp_async, server

pytestmark = pytest.mark.docker

#: How much the server's peak memory may grow while it handles the floods.
MEMORY_BOUND = 64 * 2**20
#: The slowest answer of ``GET api/status`` allowed meanwhile.
LATENCY_BOUND = 1.0
#: A million short lines, then one line of 100 MB (Docker keeps the last 60 MB of
#: it: the containers' logs rotate at 3 x 20 MB).
FLOOD = "seq 1000000; head -c 100000000 /dev/zero | tr '\\0' x; echo; echo after-the-flood"


def memory_kib(pid: int, field: str) -> int:
    """A ``/proc/PID/status`` memory field (VmRSS, VmHWM) in KiB."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise AssertionError(f"no {field} for process {pid}")


class LatencyProbe:
    """Asks ``GET api/status`` every 0.1 s in the background; the slowest answer."""

    def __init__(self, running: Server) -> None:
        self.server, self.slowest, self.calls = running, 0.0, 0
        self._task: asyncio.Task[None] | None = None

    async def _probe(self) -> None:
        while True:
            began = time.monotonic()
            code, _ = await self.server.call("GET", "api/status")
            assert code == 200
            self.slowest = max(self.slowest, time.monotonic() - began)
            self.calls += 1
            await asyncio.sleep(0.1)

    def __enter__(self) -> LatencyProbe:
        self._task = asyncio.ensure_future(self._probe())
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._task is not None
        if self._task.done():
            self._task.result()  # re-raise what stopped it
        self._task.cancel()


async def stream_log(running: Server, sid: str) -> tuple[int, int, str]:
    """Read main1's whole log over REST without keeping it: (bytes, newlines, end)."""
    size, lines, end = 0, 0, ""

    def on_chunk(chunk: bytes) -> None:
        nonlocal size, lines, end
        size += len(chunk)
        lines += chunk.count(b"\n")
        end = (end + chunk.decode(errors="replace"))[-200:]

    request = HTTPRequest(
        f"{running.url}cluster/api/sessions/{sid}/containers/main1/logs",
        headers={"Authorization": f"token {running.token}"},
        streaming_callback=on_chunk,
        request_timeout=300,
    )
    response = await running.http.fetch(request, raise_error=False)
    assert response.code == 200, response.code
    return size, lines, end


async def launch(running: Server, bootstrap: str) -> dict[str, Any]:
    """POST a size-1 session with ``bootstrap``; the session once its launch ended."""
    code, session = await running.call(
        "POST", "cluster/api/sessions", {**SMALL_BODY, "bootstrap": bootstrap}
    )
    assert code == 201, session
    sid = session["id"]

    async def settled() -> dict[str, Any] | None:
        shown = await running.session(sid)
        return shown if shown["status"] in ("RUNNING", "ERROR") else None

    return await eventually(settled, 240, f"session {sid} to be RUNNING or ERROR", interval=0.5)


@pytest.fixture
def workspace_config() -> dict[str, Any]:
    """The servers of the ``workspace`` fixture give the floods time to come through."""
    return {"ClusterManager": {"prepare_timeout": 240}}


@jp_async
async def test_log_floods_keep_the_server_small_and_responsive(workspace: Path) -> None:
    async with server(workspace) as running:
        assert running.proc is not None
        pid = running.proc.pid
        code, _ = await running.call("GET", "cluster/api/sessions")
        assert code == 200
        baseline = memory_kib(pid, "VmRSS")
        with LatencyProbe(running) as probe:
            failed = await launch(running, FLOOD + "; exit 3")
            ok = await launch(running, FLOOD)
            size, lines, end = await stream_log(running, ok["id"])
        peak = memory_kib(pid, "VmHWM")
        grew = (peak - baseline) * 1024
        print(
            f"\nlog floods: read {size / 2**20:.0f} MB / {lines} lines over REST;"
            f" server RSS {baseline / 1024:.0f} MB, peak +{grew / 2**20:.1f} MB"
            f" (bound {MEMORY_BOUND / 2**20:.0f} MB); slowest api/status"
            f" {probe.slowest * 1000:.0f} ms of {probe.calls}"
        )

        assert failed["status"] == "ERROR"
        assert "exited" in failed["status_reason"] or "failed" in failed["status_reason"]
        assert len(failed["status_reason"]) < 8 * 1024
        code, listed = await running.call("GET", "cluster/api/sessions?all=1")
        assert code == 200 and len(json.dumps(listed)) < 64 * 1024

        assert ok["status"] == "RUNNING"
        assert size > 50 * 2**20  # the rotated log still holds most of the long line
        assert end.rstrip().endswith("jupyter-cluster: ready") or "after-the-flood" in end
        assert grew < MEMORY_BOUND
        assert probe.calls > 10 and probe.slowest < LATENCY_BOUND
        code, _ = await running.call("DELETE", f"cluster/api/sessions/{ok['id']}")
        assert code == 204
