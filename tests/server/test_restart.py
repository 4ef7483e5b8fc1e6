"""Server restart: running sessions survive and are listed; logs and terminals work; a
session whose kernel went with the old server shows ``kernel_state: gone`` and can
be terminated.

Real ``jupyter server`` processes (started twice on the same Jupyter data dir), so
the extension is loaded and stopped the way it is in production; the first one is
stopped with SIGTERM (a clean stop) or SIGKILL (a crash).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from tornado.httpclient import HTTPRequest
from tornado.websocket import websocket_connect

from tests.support.constants import READY
from tests.support.docker import running_hosts
from tests.support.waiting import eventually

from .support import jp_async, server, terminal_line

pytestmark = pytest.mark.docker


@pytest.fixture
def servers_env() -> Iterator[dict[str, str]]:
    """The servers' environment, with a temporary directory of this test's own
    (``TMPDIR``, short for the sockets' paths): a test running beside this one that
    makes a private directory first sweeps the abandoned ones of the directory it
    uses (see jupyter_cluster/private_dirs.py), and would take the killed server's
    away before this test looks."""
    own = tempfile.mkdtemp(prefix="jc-restart-")
    yield {**os.environ, "TMPDIR": own}
    shutil.rmtree(own, ignore_errors=True)


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGKILL], ids=["stop", "crash"])
@jp_async
async def test_sessions_survive_a_server_restart(
    workspace: Path, jp_runtime_dir: Path, stop: int, servers_env: dict[str, str]
) -> None:
    async with server(workspace, servers_env) as first:
        code, session = await first.call(
            "POST", "cluster/api/sessions", {"size": 2, "start_kernel": True, "name": "keep"}
        )
        assert code == 201, session
        sid, kid = session["id"], session["kernel_id"]

        async def kernel_running() -> bool:
            return (await first.session(sid))["kernel_state"] == "running"

        await eventually(kernel_running, 90, "the kernel")
        connection = json.loads((jp_runtime_dir / f"kernel-{kid}.json").read_text())
        sockets = Path(connection["ip"]).parent  # the kernel tunnel's private directory
        assert sockets.is_dir() and sockets.parent == Path(servers_env["TMPDIR"])
        await first.stop(stop)
    assert running_hosts(sid) == {"main1": True, "sub1": True}
    if stop == signal.SIGKILL:
        assert sockets.is_dir()  # a killed server removes nothing...

    async with server(workspace, servers_env) as second:
        assert not sockets.exists()  # ...the next one does, once it starts
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
