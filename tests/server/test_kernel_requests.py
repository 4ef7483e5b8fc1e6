"""A cluster kernel answers a front end's other requests as a local ipykernel does.

Beside running code (:mod:`.test_kernel_parity`), a notebook asks its kernel for
input (``input()``, ``getpass``: an ``input_request`` on the stdin channel, which
the front end answers), completions (Tab), inspection (Shift+Tab), whether a cell
is complete (the console), and the comms that widgets open. Each is sent to a local
``python3`` kernel and to a cluster kernel (``jupyter-cluster-session``) through a
real jupyter_server's channels websocket, and what comes back is compared (see
:mod:`.kernel_client` for what of a message is compared); what the answers say is
checked too. The stdin channel is a socket of its own, forwarded to main1 like the
others.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from .kernel_client import Channels, by_channel, opened, record, request
from .support import jp_async

pytestmark = pytest.mark.docker

#: A cell that asks for input, then prints what it got.
ASKS = "name = input('who? '); print('hello', name)"


async def answer_input(channels: Channels, value: str) -> dict[str, Any]:
    """Run :data:`ASKS` (stdin allowed), answer its ``input_request`` with ``value``;
    what the client saw, per channel."""
    message = request(
        "execute_request",
        {"code": ASKS, "silent": False, "store_history": False, "allow_stdin": True},
    )
    msg_id = await channels.send(message)
    seen = []
    while True:  # until the kernel asks
        data = json.loads(await channels.ws.read_message())
        if data.get("parent_header", {}).get("msg_id") != msg_id:
            continue
        seen.append(record(data))
        if data["msg_type"] == "input_request":
            break
    reply = request("input_reply", {"value": value})
    reply["parent_header"] = data["header"]
    await channels.ws.write_message(json.dumps({**reply, "channel": "stdin", "buffers": []}))
    return by_channel(seen + await channels.replies(msg_id))


async def ask(channels: Channels, msg_type: str, content: dict[str, Any]) -> dict[str, Any]:
    """Send one shell request; its reply's content, and the records of its answer."""
    msg_id = await channels.send(request(msg_type, content))
    seen: dict[str, Any] = {}
    while "reply" not in seen:
        data = json.loads(await channels.ws.read_message())
        if data.get("parent_header", {}).get("msg_id") == msg_id and data["channel"] == "shell":
            seen["reply"] = data["content"]
            seen["record"] = record(data)
    return seen


async def requests_of(fetch: Any, ws_fetch: Any, name: str) -> dict[str, Any]:
    """What a client sees of each request to a new ``name`` kernel; shut down after."""
    reply = await fetch("api", "kernels", method="POST", body=json.dumps({"name": name}))
    kernel_id = json.loads(reply.body)["id"]
    seen: dict[str, Any] = {}
    try:
        async with opened(ws_fetch, kernel_id) as channels:
            seen["input"] = await answer_input(channels, "ada")
            code = "import os; os.pa"
            done = await ask(channels, "complete_request", {"code": code, "cursor_pos": len(code)})
            seen["complete"] = (done["record"], "path" in done["reply"]["matches"])
            done = await ask(
                channels, "inspect_request", {"code": "len", "cursor_pos": 3, "detail_level": 0}
            )
            text = done["reply"]["data"].get("text/plain", "")
            seen["inspect"] = (done["record"], "Return the number of items" in text)
            done = await ask(channels, "is_complete_request", {"code": "for i in x:"})
            seen["is_complete"] = (done["record"], done["reply"].get("indent"))
            done = await ask(channels, "comm_info_request", {})
            seen["comm_info"] = done["record"]
    finally:
        await fetch("api", "kernels", kernel_id, method="DELETE")
    return seen


@jp_async
async def test_input_completion_inspection_and_comms_as_a_local_kernel(
    jp_fetch: Any, jp_ws_fetch: Any, cluster: Any
) -> None:
    local = await requests_of(jp_fetch, jp_ws_fetch, "python3")
    assert ("input_request", ("who? ", False)) in local["input"]["stdin"], local
    assert ("stream", ("stdout", "hello ada\n")) in local["input"]["iopub"], local
    assert local["complete"][1] and local["inspect"][1], local
    assert local["is_complete"] == (("shell", "is_complete_reply", ("incomplete",)), "    ")
    remote = await requests_of(jp_fetch, jp_ws_fetch, "jupyter-cluster-session")
    assert remote == local
