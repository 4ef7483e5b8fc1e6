"""A cluster kernel, seen through jupyter_server, behaves as a local ipykernel does.

Each test drives a local ``python3`` kernel and a cluster kernel
(``jupyter-cluster-session``) through the same kernel-lifecycle path of a real
jupyter_server (REST and the channels websocket) and compares what the client
sees: status codes, execution states and messages in order (see
:mod:`.kernel_client` for what of a message is compared). The paths: create with
and without a client-chosen id, run code, interrupt, restart, shut down; pending
kernels; culling of idle kernels and of dead ones; the restarter's restart of a
kernel that crashed. A restart before the first
answer is in :mod:`.test_kernel_probes`, a start that fails in
``tests/integration/test_kernel_start_failure.py``, server stop at each launch
stage in :mod:`.test_server_stop`, which also runs the synchronous kernel manager
(here the asynchronous one, jupyter_server's default, runs: with the synchronous
one even a local kernel's websocket missed answers after an interrupt, now and
then). The ``cluster`` fixture fails a test that
leaves a container or network behind.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from typing import Any

import pytest

from tests.support.waiting import eventually

from .kernel_client import Channels, by_channel, execute, opened, request
from .support import jp_async, ok_http, wait_status

pytestmark = pytest.mark.docker

KERNELS = ("python3", "jupyter-cluster-session")


@pytest.fixture
def cluster_config(request: pytest.FixtureRequest) -> dict[str, Any]:
    """The server's kernel-manager settings of a test (``indirect`` parameters)."""
    return dict(getattr(request, "param", {}))


async def create(fetch: Any, name: str, **body: Any) -> tuple[int, dict[str, Any]]:
    """``POST /api/kernels``: the status code and the model."""
    reply = await fetch("api", "kernels", method="POST", body=json.dumps({"name": name, **body}))
    return reply.code, json.loads(reply.body)


async def code_of(fetch: Any, *path: str, method: str = "GET", body: Any = None) -> int:
    """The status code of a kernel REST call (errors included)."""
    data = None if body is None else json.dumps(body)
    reply = await fetch("api", "kernels", *path, method=method, body=data, raise_error=False)
    return int(reply.code)


async def gone(fetch: Any, kernel_id: str) -> bool:
    """Whether the server no longer knows the kernel."""
    return await code_of(fetch, kernel_id) == 404


async def cluster_session_ids(fetch: Any) -> list[str]:
    """The ids of the cluster sessions the server lists (active ones)."""
    return [s["id"] for s in await ok_http(fetch, "sessions")]


#: At most this many tries of a cell that ipykernel aborts right after an error.
ABORTED_TRIES = 5


async def run_after_error(channels: Channels, code: str) -> dict[str, Any]:
    """Run ``code`` right after an error (the interrupt's), as a person re-runs a cell
    that came back aborted. ipykernel aborts the execute requests it receives until it
    has finished aborting its queue; one that arrives before that (a kernel whose CPU
    quota paused it right after its error reply, on a busy machine) is aborted, local or
    in main1 alike. What the first run that was not aborted showed."""
    for _ in range(ABORTED_TRIES):
        seen = await channels.run(code)
        if seen["shell"] != [("execute_reply", ("aborted", None))]:
            return seen
    raise AssertionError(f"{code!r} was aborted {ABORTED_TRIES} times after the interrupt")


async def lifecycle(fetch: Any, ws_fetch: Any, name: str) -> dict[str, Any]:
    """Create (with an id), run, interrupt, restart and shut down a ``name`` kernel;
    what the client saw at each step."""
    seen: dict[str, Any] = {}
    kernel_id = str(uuid.uuid4())
    code, model = await create(fetch, name, kernel_id=kernel_id)
    seen["create"] = (code, model["id"] == kernel_id, model["execution_state"], sorted(model))
    ws = await ws_fetch("api", "kernels", kernel_id, "channels")
    channels = Channels(ws)
    try:
        info = await channels.send(request("kernel_info_request", {}))
        seen["kernel_info"] = by_channel(await channels.replies(info))
        seen["run"] = await channels.run("print(6 * 7)")
        sleeping = await channels.send(execute("import time; time.sleep(60)"))
        await channels.until_busy(sleeping)
        seen["interrupt"] = await code_of(fetch, kernel_id, "interrupt", method="POST", body={})
        seen["interrupted"] = by_channel(await channels.replies(sleeping))
        seen["after_interrupt"] = await run_after_error(channels, "x = 5; print(x)")
        seen["restart"] = await code_of(fetch, kernel_id, "restart", method="POST", body={})
    finally:
        ws.close()
    # As JupyterLab does after a restart: a new websocket (the server then makes sure
    # IOPub is connected before it lets messages through).
    ws = await ws_fetch("api", "kernels", kernel_id, "channels")
    try:
        seen["after_restart"] = await Channels(ws).run("print('x' in globals())")
    finally:
        ws.close()
    seen["delete"] = await code_of(fetch, kernel_id, method="DELETE")
    seen["gone"] = await gone(fetch, kernel_id)
    return seen


@jp_async
async def test_create_run_interrupt_restart_and_shut_down_as_a_local_kernel(
    jp_fetch: Any, jp_ws_fetch: Any, cluster: Any
) -> None:
    local = await lifecycle(jp_fetch, jp_ws_fetch, "python3")
    assert local["interrupted"]["iopub"][0] == ("error", ("KeyboardInterrupt",)), local
    assert local["after_restart"]["iopub"][-2] == ("stream", ("stdout", "False\n")), local
    sessions_before = await cluster_session_ids(jp_fetch)
    remote = await lifecycle(jp_fetch, jp_ws_fetch, "jupyter-cluster-session")
    assert remote == local
    [ended] = [
        s["id"]
        for s in await ok_http(jp_fetch, "sessions", params={"all": "1"})
        if s["id"] not in sessions_before
    ]
    await wait_status(jp_fetch, ended, "TERMINATED")


@pytest.mark.parametrize(
    "cluster_config", [{"MappingKernelManager": {"use_pending_kernels": True}}], indirect=True
)
@jp_async
async def test_pending_kernels_as_a_local_kernel(
    jp_fetch: Any, jp_ws_fetch: Any, cluster: Any
) -> None:
    seen = {}
    for name in KERNELS:
        code, model = await create(jp_fetch, name)
        ws = await jp_ws_fetch("api", "kernels", model["id"], "channels")
        try:
            ran = await Channels(ws).run("print(6 * 7)")
        finally:
            ws.close()
        deleted = await code_of(jp_fetch, model["id"], method="DELETE")
        seen[name] = (code, model["execution_state"], ran, deleted)

        async def removed(kernel_id: str = model["id"]) -> bool:
            return await gone(jp_fetch, kernel_id)

        await eventually(removed, 60, f"the pending {name} kernel to be removed")
    assert seen["jupyter-cluster-session"] == seen["python3"]
    assert seen["python3"][3] == 204


async def culled_kernels(fetch: Any, ws_fetch: Any, last_words: str | None) -> dict[str, Any]:
    """Start one kernel of each kind (and, with ``last_words``, run that code in it);
    wait until the culler removed both. What the client saw, per kernel."""
    seen: dict[str, Any] = {}
    ids = {}
    for name in KERNELS:
        code, model = await create(fetch, name)
        ids[name] = model["id"]
        seen[name] = [code]
        if last_words is not None:
            ws = await ws_fetch("api", "kernels", model["id"], "channels")
            try:
                seen[name].append(await Channels(ws).run(last_words))
            finally:
                ws.close()
    sessions = await cluster_session_ids(fetch)

    async def both_gone() -> bool:
        return all([await gone(fetch, kernel_id) for kernel_id in ids.values()])

    await eventually(both_gone, 90, "the culler to remove both kernels")
    for sid in sessions:
        await wait_status(fetch, sid, "TERMINATED")
    return seen


# Long enough that a cluster kernel is up and has run its cell before it is culled,
# also on a busy machine.
CULL_IDLE = {"MappingKernelManager": {"cull_idle_timeout": 15, "cull_interval": 1}}


@pytest.mark.parametrize("cluster_config", [CULL_IDLE], indirect=True)
@jp_async
async def test_an_idle_kernel_is_culled_as_a_local_kernel(
    jp_fetch: Any, jp_ws_fetch: Any, cluster: Any
) -> None:
    seen = await culled_kernels(jp_fetch, jp_ws_fetch, "print(6 * 7)")
    assert seen["jupyter-cluster-session"] == seen["python3"]


# The kernel manager gives up on a kernel that dies (no restart allowed), so it is
# dead; the culler (on, with a timeout no kernel reaches) removes dead kernels.
CULL_DEAD = {
    "KernelRestarter": {"restart_limit": 0},
    "MappingKernelManager": {"cull_idle_timeout": 600, "cull_interval": 1},
}


@pytest.mark.parametrize("cluster_config", [CULL_DEAD], indirect=True)
@jp_async
async def test_a_dead_kernel_is_removed_as_a_local_kernel_and_its_session_ends(
    jp_fetch: Any, jp_ws_fetch: Any, cluster: Any
) -> None:
    seen: dict[str, Any] = {}
    for name in KERNELS:
        code, model = await create(jp_fetch, name)
        async with opened(jp_ws_fetch, model["id"]) as channels:
            ran = await channels.run("print(1)")
            await channels.send(execute("import os; os._exit(3)"))
        seen[name] = (code, ran)
        if name != "python3":
            [sid] = await cluster_session_ids(jp_fetch)

        async def removed(kernel_id: str = model["id"]) -> bool:
            return await gone(jp_fetch, kernel_id)

        await eventually(removed, 60, f"the server to drop the dead {name} kernel")
    assert seen["jupyter-cluster-session"] == seen["python3"]
    await wait_status(jp_fetch, sid, "TERMINATED")


async def restarting_states(channels: Channels, timeout: float = 60) -> list[str]:
    """The execution states the websocket tells without a parent (the server's own
    status messages about the kernel) until it says ``restarting``."""
    states: list[str] = []
    deadline = time.monotonic() + timeout
    while "restarting" not in states:
        remaining = deadline - time.monotonic()
        assert remaining > 0, f"no 'restarting' in {timeout} s: {states}"
        message = await asyncio.wait_for(channels.ws.read_message(), remaining)
        assert message is not None, "the kernel websocket closed"
        data = json.loads(message)
        if data["msg_type"] == "status" and not data.get("parent_header"):
            states.append(data["content"]["execution_state"])
    return states


#: Seconds one try of a cell after an automatic restart waits for its answer.
TRY_AFTER_RESTART = 10.0


async def run_once_restarted(jp_ws_fetch: Any, kernel_id: str, code: str) -> dict[str, Any]:
    """Run ``code`` as JupyterLab does once the server said ``restarting``: on a new
    websocket, again on another while the restart has not finished (the server says
    ``restarting`` before it restarts the kernel, a local one on new ports)."""
    deadline = time.monotonic() + 90
    while True:
        try:
            async with opened(jp_ws_fetch, kernel_id) as channels:
                return await channels.run(code, timeout=TRY_AFTER_RESTART)
        except (AssertionError, asyncio.TimeoutError):
            if time.monotonic() > deadline:
                raise


@jp_async
async def test_a_crashed_kernel_restarts_and_runs_on_as_a_local_kernel(
    jp_fetch: Any, jp_ws_fetch: Any, cluster: Any
) -> None:
    """What a notebook shows after a crash ("The kernel appears to have died. It will
    restart automatically."): the server's restarter starts the kernel again and the
    next cell runs in a fresh process. For a cluster kernel, in the same session: its
    tunnel, closed when the kernel was seen dead, is opened again."""
    seen: dict[str, Any] = {}
    for name in KERNELS:
        _code, model = await create(jp_fetch, name)
        async with opened(jp_ws_fetch, model["id"]) as channels:
            assert (await channels.run("x = 1; print(x)"))["iopub"][-2] == (
                "stream",
                ("stdout", "1\n"),
            )
            await channels.send(execute("import os; os._exit(3)"))
            states = await restarting_states(channels)
        after = await run_once_restarted(jp_ws_fetch, model["id"], "print('x' in globals())")
        seen[name] = (states[-1], after)
        if name != "python3":
            [session] = await ok_http(jp_fetch, "sessions")
            assert session["status"] == "RUNNING", session
        assert await code_of(jp_fetch, model["id"], method="DELETE") == 204
    assert seen["python3"][1]["iopub"][-2] == ("stream", ("stdout", "False\n")), seen
    assert seen["jupyter-cluster-session"] == seen["python3"]
