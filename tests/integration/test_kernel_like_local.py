"""A cluster kernel starts in main1 as ``ipykernel install`` and jupyter_client start a
local one (core/kernel_command.py): CPython's frozen modules off, so the debugger
sees the standard library and debugpy writes no warning into main1's log, and
launched by a manager, so ipykernel writes no note for a terminal there (Ctrl-C,
``--existing`` with a path inside main1). JupyterLab's debugger works in it: a
breakpoint in a cell stops the kernel there (its requests sent as JupyterLab sends
them; tests/browser/lab_e2e.js switches it on in the Lab).
"""

from __future__ import annotations

import asyncio
import subprocess
from typing import Any

import pytest
from jupyter_client.asynchronous import AsyncKernelClient
from jupyter_client.manager import AsyncKernelManager

from tests.support.constants import SMALL_FLAGS
from tests.support.kernels import json_of, reply_to, start_client

from .support import Workspace

pytestmark = pytest.mark.docker

#: What main1's log had at every kernel start before (debugpy's, then ipykernel's).
NOISE = ("Debugger warning", "frozen modules", "Ctrl-C will not work", "--existing")


def main1_log(container_id: str) -> str:
    """main1's whole log (the kernel's output goes there)."""
    done = subprocess.run(
        ["docker", "logs", container_id], capture_output=True, text=True, check=True
    )
    return done.stdout + done.stderr


class Debugger:
    """A Debug Adapter Protocol client on a kernel's control channel, as JupyterLab's."""

    def __init__(self, kc: AsyncKernelClient) -> None:
        self.kc = kc
        self.seq = 0

    async def request(self, command: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """One request; its reply's content (asserted successful)."""
        self.seq += 1
        msg = self.kc.session.msg(
            "debug_request",
            {"type": "request", "seq": self.seq, "command": command, "arguments": arguments},
        )
        self.kc.control_channel.send(msg)
        while True:
            reply = await self.kc.control_channel.get_msg(timeout=60)
            if reply["parent_header"].get("msg_id") == msg["header"]["msg_id"]:
                content: dict[str, Any] = reply["content"]
                assert content.get("success") is True, content
                return content

    async def event(self, name: str) -> dict[str, Any]:
        """The next ``debug_event`` called ``name`` on IOPub; its body."""
        deadline = asyncio.get_running_loop().time() + 60
        while True:
            left = deadline - asyncio.get_running_loop().time()
            msg = await self.kc.get_iopub_msg(timeout=max(left, 0.1))
            if msg["msg_type"] == "debug_event" and msg["content"].get("event") == name:
                body: dict[str, Any] = msg["content"].get("body", {})
                return body


#: A cell with a breakpoint on its second line (JupyterLab's way: the cell's code is
#: dumped to a file in main1, the breakpoint set in that file).
CELL = "answer = 6\nanswer *= 7\nprint(answer)"


async def test_a_cluster_kernel_starts_as_a_local_one_and_its_debugger_stops_in_a_cell(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = ws.install_kernelspec(monkeypatch, "itest-local", *SMALL_FLAGS)
    km = AsyncKernelManager(kernel_name=name)
    kc = await start_client(km)
    try:
        assert await json_of(kc, "__import__('sys')._xoptions.get('frozen_modules')") == "off"
        assert await json_of(kc, "os.environ.get('JPY_PARENT_PID')") == "1"
        # JupyterLab's debugger: a breakpoint in a cell stops the kernel in main1 there.
        debug = Debugger(kc)
        init = await debug.request(
            "initialize",
            {
                "clientID": "test",
                "adapterID": "python",
                "pathFormat": "path",
                "linesStartAt1": True,
                "columnsStartAt1": True,
            },
        )
        assert init["body"].get("supportsConfigurationDoneRequest") is True, init
        await debug.request("attach", {})
        assert (await debug.request("debugInfo", {}))["body"]["isStarted"] is True
        path = (await debug.request("dumpCell", {"code": CELL}))["body"]["sourcePath"]
        placed = await debug.request(
            "setBreakpoints",
            {"source": {"path": path}, "breakpoints": [{"line": 2}], "sourceModified": False},
        )
        assert placed["body"]["breakpoints"][0]["verified"] is True, placed
        await debug.request("configurationDone", {})
        running = kc.execute(CELL)
        stopped = await debug.event("stopped")
        assert stopped["reason"] == "breakpoint", stopped
        thread = stopped["threadId"]
        frames = (await debug.request("stackTrace", {"threadId": thread}))["body"]["stackFrames"]
        assert (frames[0]["source"]["path"], frames[0]["line"]) == (path, 2), frames
        await debug.request("continue", {"threadId": thread})
        reply = await reply_to(kc, running, timeout=60)
        assert reply["content"]["status"] == "ok", reply
        await debug.request("disconnect", {"restart": False, "terminateDebuggee": False})
        assert await json_of(kc, "answer") == 42
        provisioner: Any = km.provisioner
        session = await provisioner.engine.get(provisioner.session_id)
        log = main1_log(session.containers[0].container_id or "")
        assert "jupyter-cluster: kernel" in log, log  # the kernel's start is in it
        assert not [n for n in NOISE if n in log], log
    finally:
        kc.stop_channels()
        await km.shutdown_kernel(now=True)
