"""JupyterLab's debugger, spoken to a kernel: the Debug Adapter Protocol on its control
channel, the requests in the order the Lab sends them.

Used by the tests that show the debugger works in a cluster kernel, cold
(``tests/integration/test_kernel_like_local.py``) and handed over from a warm main1
(``tests/integration/test_warm_pool.py``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from jupyter_client.asynchronous import AsyncKernelClient

from .kernels import json_of, reply_to

#: A cell with a breakpoint on its second line (the Lab's way: the cell's code is
#: dumped to a file in the kernel's container, the breakpoint set in that file).
CELL = "answer = 6\nanswer *= 7\nprint(answer)"


class Debugger:
    """A Debug Adapter Protocol client on a kernel's control channel, as the Lab's."""

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


async def stops_at_a_breakpoint(
    kc: AsyncKernelClient, while_stopped: Callable[[], Awaitable[None]] | None = None
) -> None:
    """Switch the debugger on as the Lab does, run :data:`CELL` with a breakpoint on
    its second line: it stops there (``while_stopped`` is awaited then, with every
    part of the debugger running), goes on when told, and finishes; then switch the
    debugger off. Fails at the first step that does not happen."""
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
    if while_stopped is not None:
        await while_stopped()
    await debug.request("continue", {"threadId": thread})
    reply = await reply_to(kc, running, timeout=60)
    assert reply["content"]["status"] == "ok", reply
    await debug.request("disconnect", {"restart": False, "terminateDebuggee": False})
    assert await json_of(kc, "answer") == 42
