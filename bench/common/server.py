"""A ``jupyter server`` with the extension as a subprocess, and what the benchmarks
ask of it: its config, JSON requests to its API, its streams, and its process's
RSS, threads, open fds and children.

:class:`Server` starts ``python -m jupyter_server`` in the run's private Jupyter
dirs (see :func:`common.sandbox.jupyter_dirs`) with a token, its log in
``<root>/server.log``; :func:`serving` is a started one with a client, which deletes
every session left and stops the server at the end. Used by ``bench_soak.py``, ``bench_io.py`` and
``bench_stats.py``, and by :mod:`common.server_load`, :mod:`common.logs` and
:mod:`common.stats_cost`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import IO, Any

import aiohttp

from common.constants import MANAGER_LABEL
from common.harness import Timer, progress
from common.sandbox import describe_objects, force_clean, jupyter_dirs, leftovers, store_manager_id


def write_server_config(agent_cpu: float, stats_interval: float | None = None, **more: Any) -> None:
    """``jupyter_cluster_config.json`` of the private config dir: the local agent
    with ``agent_cpu`` CPUs, no limit on the sessions of one user, the stats
    stream's interval (``ClusterApp.stats_interval``) if given, and any ``more``
    ``ClusterApp`` settings."""
    app: dict[str, Any] = {} if stats_interval is None else {"stats_interval": stats_interval}
    app.update(more)
    config = {
        "ClusterManager": {"agents": [{"id": "local", "cpu": agent_cpu}]},
        "ClusterApp": {**app, "max_sessions_per_user": 0},
    }
    path = Path(os.environ["JUPYTER_CONFIG_DIR"]) / "jupyter_cluster_config.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(config))


class Server:
    """A ``jupyter server`` subprocess with jupyter_cluster, and a client of its API."""

    def __init__(self, root: Path) -> None:
        self.root, self.token = root, uuid.uuid4().hex
        self.proc: subprocess.Popen[bytes] | None = None
        self.log: IO[bytes] | None = None
        self.url = ""
        self.http = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(force_close=True),  # no idle connection is kept
            headers={"Authorization": f"token {self.token}"},
        )

    async def start(self) -> None:
        """Start the server and wait until it answers."""
        port = free_port()
        self.url = f"http://127.0.0.1:{port}/"
        self.log = open(self.root / "server.log", "wb")  # noqa: SIM115 (closed in stop)
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "jupyter_server",
                f"--port={port}",
                "--ip=127.0.0.1",
                "--no-browser",
                "--allow-root",
                f"--IdentityProvider.token={self.token}",
                f"--ServerApp.root_dir={self.root}",
                "--ServerApp.port_retries=0",
                "--ServerApp.jpserver_extensions=jupyter_cluster=True",
            ],
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 90
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the server exited; see {self.root / 'server.log'}")
            try:
                if (await self.call("GET", "api/status"))[0] == 200:
                    break
            except aiohttp.ClientError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("the server did not answer within 90 s")
            await asyncio.sleep(0.3)
        code, _ = await self.call("GET", "cluster/api/agents")
        if code != 200:
            lines = (self.root / "server.log").read_text(errors="replace").splitlines()
            said = "\n".join(line for line in lines if "jupyter_cluster" in line)
            raise RuntimeError(f"the jupyter_cluster extension is not loaded:\n{said}")

    async def call(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        """One request; (status, JSON or text)."""
        async with self.http.request(method, self.url + path, json=body) as response:
            if "json" in response.headers.get("Content-Type", ""):
                return response.status, await response.json()
            return response.status, await response.text()

    async def stop(self) -> None:
        """Stop the server (SIGTERM, then SIGKILL) and close the client."""
        await self.http.close()
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                await asyncio.to_thread(self.proc.wait, 60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.log is not None:
            self.log.close()

    async def stream(self, path: str) -> aiohttp.ClientResponse:
        """Open a streamed GET (the caller closes it)."""
        response = await self.http.get(self.url + path)
        if response.status != 200:
            text = await response.text()
            response.close()
            raise RuntimeError(f"GET {path}: {response.status} {text}")
        return response


async def read_until(response: aiohttp.ClientResponse, text: str) -> None:
    """Read a streamed response until a line contains ``text``."""
    async for raw in response.content:
        if text in raw.decode(errors="replace"):
            return
    raise RuntimeError(f"the stream ended before {text!r}")


async def events_until(response: aiohttp.ClientResponse, session_id: str, status: str) -> None:
    """Read Server-Sent Events until the session event of ``session_id`` reaching ``status``."""
    async for raw in response.content:
        line = raw.decode()
        if line.startswith("data: "):
            data = json.loads(line[6:])
            if data.get("type") == "session" and (data["session_id"], data["status"]) == (
                session_id,
                status,
            ):
                return
    raise RuntimeError(f"the events stream ended before {status}")


@contextlib.asynccontextmanager
async def serving(root: Path) -> AsyncIterator[tuple[Server, aiohttp.ClientSession, str]]:
    """A started :class:`Server` in ``root``, a client of its API with its token (no
    limit on connections) and the API's URL (``…/cluster/api/``); at the end every
    session still active is deleted and the server stopped."""
    server = Server(root)
    try:
        await server.start()
        headers = {"Authorization": f"token {server.token}"}
        async with aiohttp.ClientSession(
            headers=headers, connector=aiohttp.TCPConnector(limit=0)
        ) as http:
            api = server.url + "cluster/api/"
            try:
                yield server, http, api
            finally:
                await terminate_all(http, api)
    finally:
        await server.stop()


def free_port() -> int:
    """A TCP port of 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def process_sample(pid: int, *, by_kind: bool = False) -> dict[str, Any]:
    """RSS (MB), threads, open fds and child processes of process ``pid``; with
    ``by_kind`` (the soak's), its fds also counted by kind (``fd_kinds``)."""
    status = dict(
        line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines()
    )
    children = sum(
        len(Path(f"/proc/{pid}/task/{task}/children").read_text().split())
        for task in os.listdir(f"/proc/{pid}/task")
    )
    sample = {
        "rss_mb": int(status["VmRSS"].split()[0]) / 1024,
        "threads": int(status["Threads"]),
        "children": children,
    }
    if not by_kind:
        return {**sample, "fds": len(os.listdir(f"/proc/{pid}/fd"))}
    kinds = fd_kinds(pid)
    return {**sample, "fds": sum(kinds.values()), "fd_kinds": kinds}


def fd_kinds(pid: int) -> dict[str, int]:
    """Process ``pid``'s open fds counted by what they are (``unix /path``, ``tcp :port``
    for sockets, ``pipe``, ``anon_inode:[eventfd]``, or a file's path), so a growth
    says what grew."""
    sockets = _socket_names(pid)
    kinds: dict[str, int] = {}
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:  # closed meanwhile
            continue
        if target.startswith("socket:["):
            kind = sockets.get(target[8:-1], "socket")
        else:
            kind = "pipe" if target.startswith("pipe:[") else target
        kinds[kind] = kinds.get(kind, 0) + 1
    return kinds


def _socket_names(pid: int) -> dict[str, str]:
    """Socket inode -> ``unix <path>`` or ``tcp <remote port>`` in ``pid``'s namespace."""
    names: dict[str, str] = {}
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/net/unix").read_text().splitlines()[1:]:
            fields = line.split()
            names[fields[6]] = "unix " + (fields[7] if len(fields) > 7 else "(unnamed)")
    for table in ("tcp", "tcp6"):
        with contextlib.suppress(OSError):
            for line in Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]:
                fields = line.split()
                local, remote = (int(f.rsplit(":", 1)[1], 16) for f in fields[1:3])
                port = f"listening :{local}" if fields[3] == "0A" else f"to :{remote}"
                names[fields[9]] = f"tcp {port}"
    return names


# -- JSON requests with the caller's client ------------------------------------------


async def timed_get(http: aiohttp.ClientSession, url: str) -> float:
    """Seconds of one GET whose whole body is read (it must answer 200)."""
    with Timer() as timer:
        async with http.get(url) as response:
            await response.read()
    if response.status != 200:
        raise RuntimeError(f"GET {url}: {response.status}")
    return timer.seconds


async def call(http: aiohttp.ClientSession, method: str, url: str, body: Any = None) -> Any:
    """One JSON request; its decoded answer (None when empty); raises unless 2xx."""
    async with http.request(method, url, json=body) as response:
        text = await response.text()
    if response.status >= 300:
        raise RuntimeError(f"{method} {url}: {response.status} {text[:500]}")
    return json.loads(text) if text else None


async def wait_running(http: aiohttp.ClientSession, url: str, timeout: float) -> dict[str, Any]:
    """GET a session (its URL) until RUNNING; the session."""
    deadline = time.monotonic() + timeout
    while True:
        session = await call(http, "GET", url)
        if session["status"] == "RUNNING":
            return dict(session)
        if session["status"] in ("ERROR", "TERMINATED", "CANCELLED"):
            raise RuntimeError(f"session {session['id']} ended: {session['status_reason']}")
        if time.monotonic() > deadline:
            raise RuntimeError(f"session {session['id']} is not RUNNING after {timeout} s")
        await asyncio.sleep(0.3)


async def terminate_all(http: aiohttp.ClientSession, api: str, parallel: int = 8) -> None:
    """DELETE every active session of the server, ``parallel`` at a time."""
    sessions = await call(http, "GET", api + "sessions")
    gate = asyncio.Semaphore(parallel)

    async def one(session_id: str) -> None:
        async with gate:
            await call(http, "DELETE", f"{api}sessions/{session_id}")

    await asyncio.gather(*(one(s["id"]) for s in sessions))


def server_log_tail(path: Path, lines: int = 30) -> str:
    """The last warnings and errors of the server's log (where a failed clean-up says why)."""
    if not path.is_file():
        return ""
    said = [
        line
        for line in path.read_text(errors="replace").splitlines()
        if line.startswith(("[W", "[E")) or "Error" in line
    ]
    return "\n".join(said[-lines:])


async def measured_on_server(
    measure: Callable[[Server, aiohttp.ClientSession, str], Awaitable[Any]],
    agent_cpu: float,
    stats_interval: float | None = None,
    **more: Any,
) -> Any:
    """``measure(server, http, api)`` against a fresh server in private Jupyter dirs
    (configured by :func:`write_server_config` with ``agent_cpu``, ``stats_interval``
    and ``more``); what it returns. Every session is ended and the server stopped;
    fails (after removing them) if Docker objects of the run are left. Used by the
    stats and follow benchmarks."""
    with jupyter_dirs() as root:
        manager_id = store_manager_id()
        write_server_config(agent_cpu, stats_interval, **more)
        try:
            async with serving(Path(root)) as (server, http, api):
                return await measure(server, http, api)
        finally:
            left = leftovers([f"{MANAGER_LABEL}={manager_id}"])
            if left:
                said = describe_objects(left)
                force_clean(left)
                log = server_log_tail(Path(root) / "server.log")
                raise SystemExit(
                    f"the benchmark left Docker objects behind (removed now): {said}\n{log}"
                )


async def launch_running(
    http: aiohttp.ClientSession, api: str, size: int, cpu: str, mem: str, timeout: float
) -> dict[str, Any]:
    """Launch a session of ``size`` containers of ``cpu`` CPUs and ``mem`` through REST
    and wait until it runs; its model (the stats and follow benchmarks')."""
    progress(f"launching a session of {size} x {cpu} CPU, {mem}")
    body = {"size": size, "cpu": cpu, "mem": mem}
    created = await call(http, "POST", api + "sessions", body)
    return await wait_running(http, f"{api}sessions/{created['id']}", timeout)


def add_session_options(parser: Any) -> None:
    """The options of a benchmark that measures a server around one session (stats,
    follow): its size, CPU and memory, the windows, the stats interval, the rounds."""
    parser.add_argument("--size", type=int, default=16, help="containers of the session")
    parser.add_argument("--cpu", default="0.1", help="CPUs per container")
    parser.add_argument("--mem", default="128m", help="memory per container")
    parser.add_argument("--window", type=float, default=20.0, help="seconds per measurement")
    parser.add_argument("--interval", type=float, default=2.0, help="ClusterApp.stats_interval")
    parser.add_argument("--repeat", type=int, default=3, help="rounds (and floor windows)")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds to RUNNING")
