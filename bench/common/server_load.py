"""The server under many sessions, for ``bench_io.py`` (g): stand-in sessions, SSE
listeners of the events stream, and the events fan-out probe.

A *stand-in* session is a store record copied from a real size-1 session of the
server (same owner, image, resources, agent), with its own id and one running
container of its own, labelled exactly as the engine labels main1 (session id,
host, role, manager id, …) but running ``sleep infinity`` with no network. It is
written the way a launch writes it (PREPARING with this process as its driver,
then the container, then RUNNING), so the server's reconciliation sees a healthy
running session, lists it, watches it and terminates it like any other. Stand-ins
exist because every real session has its own bridge network, and Docker's default
address pools hold about 30 networks for the whole engine (shared with whatever
else runs on it): 100 real sessions do not fit on a stock engine.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
import uuid
from dataclasses import replace
from typing import Any

import aiohttp

from common.server import call

#: CPU and memory of every session of (g), real or stand-in.
TINY_CPU, TINY_MEM = 0.01, "64m"
TINY: dict[str, Any] = {"cpu": TINY_CPU, "mem": TINY_MEM}


async def add_standins(
    docker: Any, template_id: str, count: int, manager_id: str, parallel: int = 8
) -> None:
    """Add ``count`` stand-in sessions copied from session ``template_id`` (see the
    module docstring), ``parallel`` at a time."""
    from jupyter_cluster.core.naming import container_labels
    from jupyter_cluster.core.state import ContainerStatus, SessionStatus
    from jupyter_cluster.core.units import parse_size
    from jupyter_cluster.engine.store.drivers import this_process
    from jupyter_cluster.engine.store.sessions import Store
    from jupyter_cluster.paths import default_db_path

    store = Store(default_db_path())
    template = store.get(template_id)
    assert template is not None
    gate = asyncio.Semaphore(parallel)

    async def one() -> None:
        session_id = str(uuid.uuid4())
        main = template.containers[0].with_(
            kernel_id=session_id, status=ContainerStatus.CREATING, container_id=None
        )
        session = template.with_(
            id=session_id,
            spec=replace(template.spec, name=None),
            status=SessionStatus.PREPARING,
            status_reason="",
            containers=(main,),
            created_at=0.0,
            kernel_id=None,
        )
        async with gate:
            store.insert_session(session)
            store.set_driver(session_id, this_process())
            config = {
                "Image": template.spec.image,
                "Entrypoint": ["sleep", "infinity"],
                "Cmd": [],
                "Labels": container_labels(session, main, manager_id),
                "HostConfig": {
                    "NanoCpus": round(TINY_CPU * 1e9),
                    "Memory": parse_size(TINY_MEM, "mem"),
                    "NetworkMode": "none",
                },
            }
            container = await docker.containers.create(config)
            await container.start()
            store.update_container(
                session_id, main.host, container_id=container.id, status=ContainerStatus.RUNNING
            )
            store.set_status(session_id, SessionStatus.RUNNING)
            store.set_driver(session_id, None)

    try:
        await asyncio.gather(*(one() for _ in range(count)))
    finally:
        store.close()


class Listeners:
    """``n`` clients of ``GET cluster/api/events``; when each saw each session event."""

    def __init__(self, http: aiohttp.ClientSession, url: str, n: int) -> None:
        self.http, self.url, self.n = http, url, n
        self.seen: dict[tuple[str, str], list[float]] = {}
        self.snapshots = 0
        self._changed = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []
        self._responses: list[aiohttp.ClientResponse] = []

    async def open(self, timeout: float = 60) -> None:
        """Connect them all and wait until each has its snapshot."""
        for _ in range(self.n):
            response = await self.http.get(self.url)
            if response.status != 200:
                raise RuntimeError(f"GET {self.url}: {response.status}")
            self._responses.append(response)
            self._tasks.append(asyncio.ensure_future(self._read(response)))
        await self._until(lambda: self.snapshots >= self.n, timeout)

    async def _read(self, response: aiohttp.ClientResponse) -> None:
        async for raw in response.content:
            if not raw.startswith(b"data: "):
                continue
            arrived = time.perf_counter()
            data = json.loads(raw[6:])
            if data.get("type") == "snapshot":
                self.snapshots += 1
            elif data.get("type") == "session":
                self.seen.setdefault((data["session_id"], data["status"]), []).append(arrived)
            self._changed.set()

    async def _until(self, done: Any, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not done():
            if any(t.done() for t in self._tasks):
                raise RuntimeError("an events stream ended")
            self._changed.clear()
            left = deadline - time.monotonic()
            if left <= 0:
                raise RuntimeError("the events did not reach every listener in time")
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._changed.wait(), left)

    async def arrivals(self, session_id: str, status: str, timeout: float = 30) -> list[float]:
        """When each listener got the event of ``session_id`` reaching ``status``."""
        key = (session_id, status)
        await self._until(lambda: len(self.seen.get(key, ())) >= self.n, timeout)
        return self.seen[key]

    async def close(self) -> None:
        """Close every stream."""
        for task in self._tasks:
            task.cancel()
        for response in self._responses:
            response.close()
        await asyncio.gather(*self._tasks, return_exceptions=True)


async def fanout_once(
    http: aiohttp.ClientSession, api: str, listeners: Listeners, cpu: float
) -> tuple[float, float]:
    """POST a session that must wait (it asks for ``cpu``, the agent's all) and time
    until the first and the last listener get its PENDING event; then cancel it."""
    start = time.perf_counter()
    session = await call(http, "POST", api + "sessions", {"size": 1, "cpu": cpu, "mem": "64m"})
    seen = await listeners.arrivals(session["id"], "PENDING")
    await call(http, "DELETE", f"{api}sessions/{session['id']}")
    await listeners.arrivals(session["id"], "CANCELLED")
    return min(seen) - start, max(seen) - start
