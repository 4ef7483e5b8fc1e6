"""A client of a kernel's channels websocket that records what a client sees.

Used by the parity tests (:mod:`.test_kernel_parity`), which drive a local ipykernel
and a cluster kernel the same way and compare these records: which messages came,
in which order, with which contents (ids, dates and timings left out, as they
differ between any two runs).
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

#: Message contents kept in a record, per message type (the rest varies run to run).
KEPT = {
    "status": ("execution_state",),
    "stream": ("name", "text"),
    "execute_input": ("code",),
    "execute_reply": ("status", "ename"),
    "error": ("ename",),
    "kernel_info_reply": ("status", "protocol_version", "implementation"),
    "shutdown_reply": ("status", "restart"),
    "input_request": ("prompt", "password"),
    "complete_reply": ("status",),
    "inspect_reply": ("status", "found"),
    "is_complete_reply": ("status",),
    "comm_info_reply": ("status",),
}


def request(msg_type: str, content: dict[str, Any]) -> dict[str, Any]:
    """A Jupyter message to send on the shell channel."""
    header = {
        "msg_id": uuid.uuid4().hex,
        "msg_type": msg_type,
        "username": "test",
        "session": uuid.uuid4().hex,
        "version": "5.3",
        "date": "",
    }
    return {"header": header, "parent_header": {}, "metadata": {}, "content": content}


def execute(code: str) -> dict[str, Any]:
    """An ``execute_request`` for ``code``."""
    content = {"code": code, "silent": False, "store_history": False, "allow_stdin": False}
    return request("execute_request", content)


def record(data: dict[str, Any]) -> tuple[str, str, tuple[Any, ...]]:
    """What the parity tests compare of one message: channel, type, kept contents."""
    kind = data["msg_type"]
    content = data.get("content") or {}
    return data.get("channel", ""), kind, tuple(content.get(k) for k in KEPT.get(kind, ()))


def by_channel(
    seen: list[tuple[str, str, tuple[Any, ...]]],
) -> dict[str, list[tuple[str, tuple[Any, ...]]]]:
    """Records per channel, each in the order it came: the order across channels
    (e.g. the shell reply against IOPub's last status) is not defined by Jupyter's
    protocol, for a local kernel either.

    Consecutive ``stream`` messages of one stream are joined into one, as a
    front end shows them: where ipykernel cuts its output depends on when its IO
    thread flushes (``print`` writes the text and the newline apart), so a busy
    machine may send ``'False'`` and ``'\\n'`` for what is ``'False\\n'`` at other
    times, from a local kernel as from a cluster kernel.
    """
    channels: dict[str, list[tuple[str, tuple[Any, ...]]]] = {}
    for channel, kind, kept in seen:
        records = channels.setdefault(channel, [])
        if kind == "stream" and records and records[-1][0] == "stream":
            (last_name, last_text), (name, text) = records[-1][1], kept
            if last_name == name:
                records[-1] = (kind, (name, last_text + text))
                continue
        records.append((kind, kept))
    return channels


class Channels:
    """The channels websocket of one kernel (``ws``, from ``jp_ws_fetch``)."""

    def __init__(self, ws: Any) -> None:
        self.ws = ws

    async def send(self, message: dict[str, Any]) -> str:
        """Send ``message`` on the shell channel; its msg_id."""
        await self.ws.write_message(json.dumps({**message, "channel": "shell", "buffers": []}))
        return str(message["header"]["msg_id"])

    async def replies(
        self, msg_id: str, until: tuple[str, ...] = ("idle",), timeout: float = 60
    ) -> list[tuple[str, str, tuple[Any, ...]]]:
        """Records of the messages answering ``msg_id``, until IOPub says a state in
        ``until`` and the shell reply has come (or the websocket closes)."""
        seen: list[tuple[str, str, tuple[Any, ...]]] = []
        replied = settled = False
        deadline = time.monotonic() + timeout
        while not (replied and settled):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(f"no complete answer to {msg_id} in {timeout} s: {seen}")
            message = await asyncio.wait_for(self.ws.read_message(), remaining)
            if message is None:
                seen.append(("", "websocket closed", ()))
                return seen
            data = json.loads(message)
            if data.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            seen.append(record(data))
            replied = replied or data.get("channel") == "shell"
            if data["msg_type"] == "status":
                settled = data["content"]["execution_state"] in until
        return seen

    async def run(
        self, code: str, timeout: float = 60
    ) -> dict[str, list[tuple[str, tuple[Any, ...]]]]:
        """Execute ``code``; the records of its answer (see :func:`by_channel`)."""
        return by_channel(await self.replies(await self.send(execute(code)), timeout=timeout))

    async def until_busy(self, msg_id: str, timeout: float = 60) -> None:
        """Wait for the kernel to say it is busy with ``msg_id`` and to echo its code."""
        deadline = time.monotonic() + timeout
        while True:
            message = await asyncio.wait_for(self.ws.read_message(), deadline - time.monotonic())
            assert message is not None, "the kernel websocket closed"
            data = json.loads(message)
            ours = data.get("parent_header", {}).get("msg_id") == msg_id
            if ours and data["msg_type"] == "execute_input":
                return


@asynccontextmanager
async def opened(ws_fetch: Any, kernel_id: str) -> AsyncIterator[Channels]:
    """The channels websocket of kernel ``kernel_id`` (``ws_fetch``: ``jp_ws_fetch``),
    closed on leaving."""
    ws = await ws_fetch("api", "kernels", kernel_id, "channels")
    try:
        yield Channels(ws)
    finally:
        ws.close()
