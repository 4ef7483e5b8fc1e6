"""Server restart: running sessions survive and are listed; logs and terminals work; a
session whose kernel went with the old server shows ``kernel_state: gone`` and can
be terminated.

Real ``jupyter server`` processes (started twice on the same Jupyter data dir), so
the extension is loaded and stopped the way it is in production; the first one is
stopped with SIGTERM (a clean stop) or SIGKILL (a crash).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from tornado.httpclient import AsyncHTTPClient, HTTPRequest
from tornado.websocket import websocket_connect

from jupyter_cluster.engine.store.sessions import Store
from tests.support.constants import READY, SMALL_BODY
from tests.support.docker import assert_nothing_left, remove_leftovers, running_hosts
from tests.support.processes import free_port
from tests.support.waiting import eventually

from .support import jp_async, terminal_line

pytestmark = pytest.mark.docker


class Server:
    """A ``jupyter server`` subprocess and a small client of its REST API."""

    def __init__(self, root: Path, token: str) -> None:
        self.root, self.token = root, token
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/"
        self.proc: asyncio.subprocess.Process | None = None
        self.http = AsyncHTTPClient(force_instance=True)

    async def start(self) -> None:
        log = open(self.root / f"server-{self.port}.log", "wb")  # noqa: SIM115
        self.proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "jupyter_server",
            f"--port={self.port}",
            "--ip=127.0.0.1",
            "--no-browser",
            "--allow-root",
            f"--IdentityProvider.token={self.token}",
            f"--ServerApp.root_dir={self.root}",
            "--ServerApp.jpserver_extensions=jupyter_cluster=True",
            stdout=log,
            stderr=log,
            env=dict(os.environ),
        )

        async def up() -> bool:
            assert self.proc is not None and self.proc.returncode is None, "the server died"
            code, _ = await self.call("GET", "api/status")
            return code == 200

        await eventually(up, 60, "the server to answer", interval=0.3)

    async def call(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        request = HTTPRequest(
            self.url + path,
            method=method,
            body=None if body is None and method != "POST" else json.dumps(body or {}),
            headers={"Authorization": f"token {self.token}"},
            request_timeout=60,
        )
        try:
            response = await self.http.fetch(request, raise_error=False)
        except OSError:
            return 0, None
        text = response.body.decode() if response.body else ""
        if "json" in (response.headers.get("Content-Type") or "") and text:
            return response.code, json.loads(text)
        return response.code, text

    async def session(self, sid: str) -> dict[str, Any]:
        code, data = await self.call("GET", f"cluster/api/sessions/{sid}")
        assert code == 200, data
        return data

    async def stop(self, sig: int) -> None:
        if self.proc is not None and self.proc.returncode is None:
            self.proc.send_signal(sig)
            await asyncio.wait_for(self.proc.wait(), 60)


@asynccontextmanager
async def server(root: Path) -> AsyncIterator[Server]:
    running = Server(root, uuid.uuid4().hex)
    try:
        await running.start()
        yield running
    finally:
        await running.stop(signal.SIGKILL)


@pytest.fixture
def workspace(tmp_path: Path, jp_environ: Any, jp_data_dir: Path, jp_config_dir: Path) -> Any:
    """This test's Jupyter dirs (set by pytest-jupyter); no leaks of its manager id."""
    (jp_config_dir / "jupyter_cluster_config.json").write_text(
        json.dumps(
            {"ClusterApp": {"default_launch_options": SMALL_BODY, "events_poll_interval": 0.2}}
        )
    )
    store = Store(jp_data_dir / "cluster" / "cluster.db")
    manager_id = store.manager_id
    store.close()
    yield tmp_path
    assert_nothing_left(manager_id, *remove_leftovers(manager_id))


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGKILL], ids=["stop", "crash"])
@jp_async
async def test_sessions_survive_a_server_restart(workspace: Path, stop: int) -> None:
    async with server(workspace) as first:
        code, session = await first.call(
            "POST", "cluster/api/sessions", {"size": 2, "start_kernel": True, "name": "keep"}
        )
        assert code == 201, session
        sid, kid = session["id"], session["kernel_id"]

        async def kernel_running() -> bool:
            return (await first.session(sid))["kernel_state"] == "running"

        await eventually(kernel_running, 90, "the kernel")
        await first.stop(stop)
    assert running_hosts(sid) == {"main1": True, "sub1": True}

    async with server(workspace) as second:
        code, listed = await second.call("GET", "cluster/api/sessions")
        assert code == 200 and [s["id"] for s in listed] == [sid]
        assert listed[0]["status"] == "RUNNING"
        assert listed[0]["kernel_id"] == kid and listed[0]["kernel_state"] == "gone"
        code, _ = await second.call("GET", f"api/kernels/{kid}")
        assert code == 404

        code, log = await second.call("GET", f"cluster/api/sessions/{sid}/containers/main1/logs")
        assert code == 200 and READY in log
        code, terminal = await second.call(
            "POST", f"cluster/api/sessions/{sid}/containers/sub1/terminals"
        )
        assert code == 201, terminal
        ws = await websocket_connect(
            HTTPRequest(
                f"ws://127.0.0.1:{second.port}/terminals/websocket/{terminal['name']}",
                headers={"Authorization": f"token {second.token}"},
            )
        )
        try:
            await terminal_line(ws, "hostname", "sub1")
        finally:
            ws.close()

        code, _ = await second.call("DELETE", f"cluster/api/sessions/{sid}")
        assert code == 204
        assert (await second.session(sid))["status"] == "TERMINATED"
        assert running_hosts(sid) == {}
        await second.stop(signal.SIGTERM)
