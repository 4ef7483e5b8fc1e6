"""Real kernels through jupyter_client: start one, run cells in it, read their output.

A cell runs with ``execute_interactive`` and an output hook that collects its
streams, errors and display data into a :class:`Cell`; :func:`ok_cell` also asserts
that the cell succeeded, :func:`json_of` evaluates an expression through JSON.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from jupyter_client.asynchronous import AsyncKernelClient
from jupyter_client.manager import AsyncKernelManager

from .constants import START_TIMEOUT


@dataclass
class Cell:
    """What one executed cell produced, as seen on iopub and the shell channel."""

    status: str
    stdout: str = ""
    stderr: str = ""
    errors: list[dict[str, Any]] = field(default_factory=list)
    data: list[dict[str, Any]] = field(default_factory=list)
    #: The content of the execute_reply.
    reply: dict[str, Any] = field(default_factory=dict)

    def __str__(self) -> str:
        tracebacks = "\n".join("\n".join(e.get("traceback", [])) for e in self.errors)
        return (
            f"status {self.status}\n--- stdout\n{self.stdout}--- stderr\n{self.stderr}"
            f"--- errors\n{tracebacks}"
        )


async def run_cell(kc: AsyncKernelClient, code: str, timeout: float = 120) -> Cell:
    """Run ``code`` in the kernel; collect its streams, errors and display data."""
    cell = Cell(status="")

    def hook(msg: dict[str, Any]) -> None:
        kind, content = msg["msg_type"], msg["content"]
        if kind == "stream":
            name = content["name"]
            setattr(cell, name, getattr(cell, name) + content["text"])
        elif kind == "error":
            cell.errors.append(content)
        elif kind in ("display_data", "execute_result"):
            cell.data.append(content["data"])

    reply = await kc.execute_interactive(code, timeout=timeout, output_hook=hook)
    cell.reply = reply["content"]
    cell.status = cell.reply["status"]
    return cell


async def ok_cell(kc: AsyncKernelClient, code: str, timeout: float = 120) -> Cell:
    """Like :func:`run_cell`, asserting that the cell succeeded without an error."""
    cell = await run_cell(kc, code, timeout)
    assert cell.status == "ok" and not cell.errors, str(cell)
    return cell


async def json_of(kc: AsyncKernelClient, expression: str) -> Any:
    """Evaluate ``expression`` in the kernel (``json`` and ``os`` imported); its value."""
    cell = await ok_cell(kc, f"import json, os\nprint(json.dumps({expression}))")
    return json.loads(cell.stdout)


async def reply_to(kc: AsyncKernelClient, msg_id: str, timeout: float) -> dict[str, Any]:
    """The shell reply to ``msg_id`` (skipping leftovers such as extra kernel_info replies)."""
    deadline = time.monotonic() + timeout
    while True:
        msg = await kc.get_shell_msg(timeout=max(deadline - time.monotonic(), 0.01))
        if msg["parent_header"].get("msg_id") == msg_id:
            return msg


async def start_client(km: AsyncKernelManager, **start: Any) -> AsyncKernelClient:
    """Start ``km``'s kernel (``start`` goes to ``start_kernel``); a client that got
    kernel_info. The caller stops the client's channels and shuts the kernel down."""
    await asyncio.wait_for(km.start_kernel(**start), START_TIMEOUT)
    kc = km.client()
    kc.start_channels()
    try:
        await kc.wait_for_ready(timeout=60)
    except BaseException:
        kc.stop_channels()
        raise
    return kc


@asynccontextmanager
async def kernel_running(kernel_name: str, **start: Any) -> AsyncIterator[AsyncKernelClient]:
    """A kernel of ``kernel_name`` started (``start`` goes to ``start_kernel``) and its
    ready client; on leaving, the client's channels stop and the kernel is shut down."""
    km = AsyncKernelManager(kernel_name=kernel_name)
    kc = await start_client(km, **start)
    try:
        yield kc
    finally:
        kc.stop_channels()
        await km.shutdown_kernel(now=True)
