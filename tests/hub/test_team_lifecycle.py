"""Team mode over time: limits under concurrent launches, kernels from ``/api/kernels``,
the notebook API and ``%cluster`` in a user's kernel, and restarts of the service and of
a user's server.

Everything runs on the real JupyterHub of the ``hub`` fixture; alice's servers reach
the shared service with their own tokens and hold no Docker access.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import time
import uuid
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import requests
from tornado.httpclient import HTTPRequest
from tornado.websocket import websocket_connect

from tests.support.constants import API, SMALL_BODY
from tests.support.waiting import wait_for

from .launch import MAX_SESSIONS
from .support import (
    Hub,
    active_sessions,
    end_sessions,
    launch,
    ok,
    process_env,
    status,
    wait_running,
)

KERNEL_NAME = "jupyter-cluster-session"


async def _send(hub: Hub, user: str, token: str, kernel_id: str, code: str) -> tuple[Any, str]:
    """Open a channels websocket to a kernel of ``user``'s server and send ``code`` to
    run; the websocket (the caller closes it) and the request's msg_id."""
    url = hub.server_base(user).replace("http", "ws", 1) + f"api/kernels/{kernel_id}/channels"
    ws = await websocket_connect(HTTPRequest(url, headers={"Authorization": f"token {token}"}))
    msg_id = uuid.uuid4().hex
    header = {"msg_id": msg_id, "msg_type": "execute_request", "username": user}
    header.update(session=uuid.uuid4().hex, version="5.3", date="")
    content = {"code": code, "silent": False, "store_history": False, "allow_stdin": False}
    content["stop_on_error"] = False
    request = {"header": header, "parent_header": {}, "metadata": {}, "content": content}
    await ws.write_message(json.dumps({**request, "channel": "shell", "buffers": []}))
    return ws, msg_id


async def _messages(ws: Any, seconds: float) -> AsyncIterator[dict[str, Any]]:
    """The websocket's messages, parsed, for at most ``seconds`` (then TimeoutError)."""
    deadline = time.monotonic() + seconds
    while True:
        message = await asyncio.wait_for(ws.read_message(), deadline - time.monotonic())
        assert message is not None, "the kernel websocket closed"
        yield json.loads(message)


async def _run(hub: Hub, user: str, token: str, kernel_id: str, code: str, **how: Any) -> Any:
    """Run ``code`` in a kernel of ``user``'s server; (stdout, error name or None).
    ``interrupt_after`` seconds into the cell, the kernel is interrupted over REST."""
    ws, msg_id = await _send(hub, user, token, kernel_id, code)
    if "interrupt_after" in how:
        await asyncio.sleep(how["interrupt_after"])
        path = f"api/kernels/{kernel_id}/interrupt"
        await asyncio.to_thread(hub.server_call, user, "POST", path, token)
    out, error = "", None
    try:
        async for data in _messages(ws, 180):
            if data.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            if data["msg_type"] == "stream":
                out += data["content"]["text"]
            elif data["msg_type"] == "error":
                error = data["content"]["ename"]
            elif data["msg_type"] == "status" and data["content"]["execution_state"] == "idle":
                return out, error
    finally:
        ws.close()


def run(hub: Hub, user: str, token: str, kernel_id: str, code: str, **how: Any) -> Any:
    return asyncio.run(_run(hub, user, token, kernel_id, code, **how))


async def _crash(hub: Hub, user: str, token: str, kernel_id: str) -> None:
    """End the kernel of ``user``'s server from inside (a crash), then wait for the
    server to say it restarts it (a status without a parent: ``restarting``)."""
    ws, _ = await _send(hub, user, token, kernel_id, "import os; os._exit(3)")
    try:
        async for data in _messages(ws, 60):
            state = data["content"].get("execution_state") if data["msg_type"] == "status" else ""
            if state == "restarting" and not data.get("parent_header"):
                return
    finally:
        ws.close()


def start_kernel(hub: Hub, user: str, token: str, name: str) -> str:
    """Start a kernel of kernelspec ``name`` in ``user``'s server; its id."""
    reply = hub.server_call(user, "POST", "api/kernels", token, json={"name": name}, timeout=300)
    return str(ok(reply, 201).json()["id"])


def test_limits_hold_under_concurrent_launches_from_two_servers(
    hub: Hub, team: dict[str, str]
) -> None:
    """Six launches at once from two of alice's servers: exactly the limit get a
    session; then a kernel from /api/kernels is refused as well (every path counts)."""
    alice = team["alice"]
    hub.start_server("alice", "second")
    try:
        with ThreadPoolExecutor(6) as pool:
            replies = list(
                pool.map(
                    lambda i: hub.server_call(
                        "alice",
                        "POST",
                        f"{API}/sessions",
                        alice,
                        "second" if i % 2 else "",
                        json=SMALL_BODY,
                    ),
                    range(6),
                )
            )
        codes = sorted(r.status_code for r in replies)
        assert codes == [201] * MAX_SESSIONS + [409] * (6 - MAX_SESSIONS), [
            (r.status_code, r.text) for r in replies
        ]
        refusals = [r.json()["message"] for r in replies if r.status_code == 409]
        assert all(str(MAX_SESSIONS) in m for m in refusals), refusals
        assert len(active_sessions(hub, "alice", alice)) == MAX_SESSIONS
        # a kernel whose start would launch a fourth session fails, saying why
        reply = hub.server_call(
            "alice", "POST", "api/kernels", alice, json={"name": KERNEL_NAME}, timeout=120
        )
        assert reply.status_code >= 400, reply.text
        assert len(active_sessions(hub, "alice", alice)) == MAX_SESSIONS
        # bob is not held back by alice's sessions
        bob = team["bob"]
        bobs = launch(hub, "bob", bob, SMALL_BODY)
        hub.server_call("bob", "DELETE", f"{API}/sessions/{bobs['id']}", bob)
    finally:
        end_sessions(hub, "alice", alice)
        hub.stop_server("alice", "second")


def test_a_cluster_kernel_from_api_kernels_interrupts_restarts_and_shuts_down(
    hub: Hub, team: dict[str, str]
) -> None:
    """The provisioner in alice's server asks the service for a session and runs the
    kernel in main1 over SSH: interrupt, restart in place, a crash the server restarts
    it from (its tunnel closed when it died, then opened again), shutdown ends the
    session."""
    alice = team["alice"]
    kernel_id = start_kernel(hub, "alice", alice, KERNEL_NAME)
    try:
        [session] = active_sessions(hub, "alice", alice)
        assert session["status"] == "RUNNING" and session["owner"] == "alice"
        out, error = run(
            hub, "alice", alice, kernel_id, "import socket; x = 41; print(socket.gethostname())"
        )
        assert (out.strip(), error) == ("main1", None)
        out, error = run(
            hub, "alice", alice, kernel_id, "import time; time.sleep(60)", interrupt_after=3
        )
        assert error == "KeyboardInterrupt", (out, error)
        assert run(hub, "alice", alice, kernel_id, "print(x + 1)") == ("42\n", None)
        path = f"api/kernels/{kernel_id}/restart"
        ok(hub.server_call("alice", "POST", path, alice, timeout=120))
        out, error = run(hub, "alice", alice, kernel_id, "print('x' in globals())")
        assert (out.strip(), error) == ("False", None)  # a fresh process …
        [same] = active_sessions(hub, "alice", alice)
        assert same["id"] == session["id"]  # … in the same session
        # a crash: the server's restarter starts it again over a new tunnel
        asyncio.run(_crash(hub, "alice", alice, kernel_id))
        assert run(hub, "alice", alice, kernel_id, "print(1 + 1)") == ("2\n", None)
        [same] = active_sessions(hub, "alice", alice)
        assert same["id"] == session["id"]
    finally:
        hub.server_call("alice", "DELETE", f"api/kernels/{kernel_id}", alice, timeout=120)
    wait_for(lambda: not active_sessions(hub, "alice", alice), 120, "the kernel's session to end")


def test_the_notebook_api_and_magic_in_a_users_kernel_use_the_service(
    hub: Hub, team: dict[str, str]
) -> None:
    """A plain Python kernel in alice's server: ClusterSession and %cluster reach the
    service with her server's token; the session is hers; the kernel has no Docker."""
    alice = team["alice"]
    kernel_id = start_kernel(hub, "alice", alice, "python3")
    code = (
        "from jupyter_cluster import ClusterSession\n"
        "s = ClusterSession.launch(cpu=0.25, mem='256m', size=2)\n"
        "print(s.model.owner, s.status.value, s.exec('sub1', 'hostname').stdout.strip())\n"
        "print([c.id for c in ClusterSession.list()] == [s.id])\n"
        "get_ipython().run_line_magic('load_ext', 'jupyter_cluster')\n"
        "get_ipython().run_line_magic('cluster', 'ls')\n"
        "s.terminate()\n"
        "print(s.status.value)\n"
    )
    try:
        out, error = run(hub, "alice", alice, kernel_id, code)
        assert error is None, out
        lines = out.splitlines()
        assert lines[0] == "alice RUNNING sub1" and lines[1] == "True", out
        assert lines[-1] == "TERMINATED", out
        assert any("alice" in line or "RUNNING" in line for line in lines[2:-1]), out
    finally:
        hub.server_call("alice", "DELETE", f"api/kernels/{kernel_id}", alice)
        end_sessions(hub, "alice", alice)


def service_pid(hub: Hub) -> int | None:
    """The pid of this Hub's cluster service process, if it runs."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            env = process_env(int(entry.name))
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if (
            env.get("JUPYTERHUB_SERVICE_NAME") == "cluster"
            and str(hub.state) in env.get("JUPYTER_DATA_DIR", "")
            and b"jupyter_cluster.server.serve" in cmdline
        ):
            return int(entry.name)
    return None


def test_sessions_and_kernels_survive_restarts_of_the_service_and_of_the_users_server(
    hub: Hub, team: dict[str, str]
) -> None:
    alice = team["alice"]
    session = launch(hub, "alice", alice, {**SMALL_BODY, "start_kernel": True})
    sid = session["id"]
    try:
        seen: dict[str, Any] = {}

        def kernel_runs() -> bool:
            seen.update(status(hub, "alice", alice, sid))
            return bool(seen["kernel_state"] == "running")

        wait_for(kernel_runs, 240, "the kernel to run", seen=lambda: seen)
        kernel_id = seen["kernel_id"]
        assert run(hub, "alice", alice, kernel_id, "x = 41") == ("", None)

        # the service dies; JupyterHub starts it again; it adopts its sessions from the
        # store; alice's kernel never noticed (its traffic goes over SSH to main1)
        old = service_pid(hub)
        assert old is not None
        os.kill(old, signal.SIGKILL)

        def back() -> bool:
            pid = service_pid(hub)
            if pid is None or pid == old:
                return False
            try:
                return hub.server_call("alice", "GET", f"{API}/sessions", alice).ok
            except requests.RequestException:
                return False

        wait_for(back, 120, "JupyterHub to restart the cluster service")
        assert status(hub, "alice", alice, sid)["status"] == "RUNNING"
        assert run(hub, "alice", alice, kernel_id, "print(x + 1)") == ("42\n", None)

        # alice's server stops (its kernels with it) and starts again: the session
        # is still hers, running, and its kernel is gone
        hub.stop_server("alice")
        hub.start_server("alice")
        again = wait_running(hub, "alice", alice, sid)
        assert again["owner"] == "alice" and again["kernel_state"] == "gone"
    finally:
        hub.server_call("alice", "DELETE", f"{API}/sessions/{sid}", alice)
    wait_for(lambda: not active_sessions(hub, "alice", alice), 120, "the session to end")
