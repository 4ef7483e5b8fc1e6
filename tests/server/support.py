"""Helpers of the server tests: the REST API through pytest-jupyter, SSE, websockets.

The tests run a real Jupyter server with the jupyter_cluster extension
(pytest-jupyter's ``jp_serverapp``; each test has its own JUPYTER_DATA_DIR, so its
own store and manager id) against the real Docker engine. What Docker really did
is checked with :mod:`tests.support.docker`, independently of the code under test.

Async tests are wrapped with :func:`jp_async` so they run in pytest-jupyter's
event loop (where its HTTP server runs), not in pytest-asyncio's. The tests that must
start and stop servers themselves (a restart, a crash, the server's own memory) run
real ``jupyter server`` processes through :func:`server` instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import os
import re
import signal
import sys
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import yarl
from jupyter_core.utils import ensure_event_loop
from tornado.httpclient import AsyncHTTPClient, HTTPRequest, HTTPResponse

from tests.support.constants import API
from tests.support.processes import free_port
from tests.support.waiting import eventually

#: :data:`~tests.support.constants.API` as the path segments ``jp_fetch`` takes.
API_SEGMENTS = tuple(API.split("/"))
Fetch = Callable[..., Awaitable[HTTPResponse]]


def jp_async(test: Callable[..., Coroutine[Any, Any, None]]) -> Callable[..., None]:
    """Run an async test to completion in pytest-jupyter's loop."""

    @functools.wraps(test)
    def run(*args: Any, **kwargs: Any) -> None:
        ensure_event_loop(prefer_selector_loop=True).run_until_complete(test(*args, **kwargs))

    return run


async def call(
    fetch: Fetch,
    *path: str,
    method: str = "GET",
    body: Any = None,
    params: dict[str, str] | None = None,
    base: tuple[str, ...] = API_SEGMENTS,
    headers: dict[str, str] | None = None,
) -> tuple[int, Any, HTTPResponse]:
    """One request to ``BASE/PATH`` (``cluster/api`` by default): (status, JSON or text or
    None, response)."""
    if body is not None and not isinstance(body, (str, bytes)):
        body = json.dumps(body)
    if body is None and method in ("POST", "PUT", "PATCH"):
        body = ""
    response = await fetch(
        *base,
        *path,
        method=method,
        body=body,
        params=params,
        headers=dict(headers or {}),
        raise_error=False,
        allow_nonstandard_methods=True,
    )
    text = response.body.decode() if response.body else ""
    data: Any = None
    if text and "json" in (response.headers.get("Content-Type") or ""):
        data = json.loads(text)
    elif text:
        data = text
    return response.code, data, response


async def ok_http(fetch: Fetch, *path: str, **request: Any) -> Any:
    """Like :func:`call` (with its keyword arguments), asserting an HTTP 2xx status;
    returns the data."""
    code, data, _ = await call(fetch, *path, **request)
    route = "/".join((*request.get("base", API_SEGMENTS), *path))
    assert 200 <= code < 300, f"{request.get('method', 'GET')} {route} -> {code}: {data}"
    return data


async def wait_status(
    fetch: Fetch,
    ref: str,
    *statuses: str,
    timeout: float = 60,
    headers: dict[str, str] | None = None,
) -> Any:
    """GET a session until its status is one of ``statuses``; returns it."""
    last: dict[str, Any] = {}

    async def probe() -> Any:
        nonlocal last
        last = await ok_http(fetch, "sessions", ref, headers=headers)
        return last if last["status"] in statuses else None

    what = f"session {ref} to be {'/'.join(statuses)}"
    return await eventually(probe, timeout, what, seen=lambda: last)


async def wait_kernel(fetch: Fetch, sid: str) -> dict[str, Any]:
    """GET a session until its kernel runs (failing at once if it failed or is gone);
    returns the session."""

    async def running() -> Any:
        session = await ok_http(fetch, "sessions", sid)
        assert session["kernel_state"] not in ("failed", "gone"), session
        return session if session["kernel_state"] == "running" else None

    return await eventually(running, 90, "the session's kernel")


# -- streams -------------------------------------------------------------------------


def stream_url(port: int, base_url: str, *path: str, query: str = "") -> yarl.URL:
    """An already-encoded URL of the test server (keeps %40 in pytest-jupyter's base URL)."""
    url = f"http://127.0.0.1:{port}{base_url}{'/'.join(path)}" + (f"?{query}" if query else "")
    return yarl.URL(url, encoded=True)


class EventStream:
    """A client of ``GET cluster/api/events``: collects Server-Sent Events in the background."""

    def __init__(self, url: yarl.URL, headers: dict[str, str]) -> None:
        self.url, self.headers = url, headers
        self.events: list[tuple[str, dict[str, Any]]] = []
        self._changed = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._http: aiohttp.ClientSession | None = None

    async def __aenter__(self) -> EventStream:
        self._http = aiohttp.ClientSession()
        response = await self._http.get(self.url, headers=self.headers)
        assert response.status == 200, await response.text()
        assert response.headers["Content-Type"].startswith("text/event-stream")
        self._task = asyncio.ensure_future(self._read(response))
        await self.wait_for(lambda name, _: name == "snapshot", 10, "the snapshot event")
        return self

    async def _read(self, response: aiohttp.ClientResponse) -> None:
        name, data = "message", ""
        async for raw in response.content:
            line = raw.decode().rstrip("\n")
            if line.startswith("event: "):
                name = line[7:]
            elif line.startswith("data: "):
                data += line[6:]
            elif not line and data:
                self.events.append((name, json.loads(data)))
                name, data = "message", ""
                self._changed.set()

    async def wait_for(
        self, match: Callable[[str, dict[str, Any]], bool], timeout: float, what: str
    ) -> dict[str, Any]:
        """The first event (old or new) for which ``match(name, data)`` holds."""
        deadline = time.monotonic() + timeout
        while True:
            for name, data in self.events:
                if match(name, data):
                    return data
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                seen = [(n, d.get("status"), d.get("host")) for n, d in self.events]
                pytest.fail(f"no event for {what} within {timeout:g} s; saw {seen}")
            self._changed.clear()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._changed.wait(), remaining)

    async def session(self, session_id: str, status: str, timeout: float = 15) -> dict[str, Any]:
        """The ``session`` event of ``session_id`` reaching ``status``."""
        return await self.wait_for(
            lambda n, d: n == "session" and d["session_id"] == session_id and d["status"] == status,
            timeout,
            f"session {session_id} {status}",
        )

    async def container(
        self, session_id: str, host: str, status: str, timeout: float = 15
    ) -> dict[str, Any]:
        """The ``container`` event of ``host`` reaching ``status``."""
        return await self.wait_for(
            lambda n, d: (
                n == "container"
                and d["session_id"] == session_id
                and d["host"] == host
                and d["status"] == status
            ),
            timeout,
            f"{host} of {session_id} {status}",
        )

    async def __aexit__(self, *exc: object) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
        if self._http is not None:
            await self._http.close()


# -- terminals and kernels over websockets ---------------------------------------------------

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")


async def terminal_line(ws: Any, command: str, expected: str, timeout: float = 30) -> str:
    """Type ``command`` in a terminal websocket; wait for a line that is exactly ``expected``."""
    await ws.write_message(json.dumps(["stdin", command + "\r"]))
    pattern = re.compile(rf"[\r\n]{re.escape(expected)}\r?\n")
    text = ""
    deadline = time.monotonic() + timeout
    while not pattern.search(_ANSI.sub("", text)):
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            pytest.fail(f"{command!r} did not print {expected!r}; the terminal shows {text!r}")
        try:
            message = await asyncio.wait_for(ws.read_message(), remaining)
        except asyncio.TimeoutError:
            continue
        if message is None:
            pytest.fail(f"the terminal closed; it showed {text!r}")
        kind, *rest = json.loads(message)
        if kind == "stdout":
            text += rest[0]
    return text


async def kernel_execute(ws: Any, code: str, timeout: float = 60) -> str:
    """Run ``code`` through a kernel's channels websocket; its stdout."""
    msg_id = uuid.uuid4().hex
    header = {
        "msg_id": msg_id,
        "msg_type": "execute_request",
        "username": "test",
        "session": uuid.uuid4().hex,
        "version": "5.3",
        "date": "",
    }
    content = {"code": code, "silent": False, "store_history": False, "allow_stdin": False}
    request = {"header": header, "parent_header": {}, "metadata": {}, "content": content}
    await ws.write_message(json.dumps({**request, "channel": "shell", "buffers": []}))
    out, done = "", False
    deadline = time.monotonic() + timeout
    while not done:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            pytest.fail(f"the kernel did not finish {code!r}; output so far {out!r}")
        message = await asyncio.wait_for(ws.read_message(), remaining)
        assert message is not None, "the kernel websocket closed"
        data = json.loads(message)
        if data.get("parent_header", {}).get("msg_id") != msg_id:
            continue
        kind = data["msg_type"]
        if kind == "stream":
            out += data["content"]["text"]
        elif kind == "error":
            pytest.fail(f"the kernel raised {data['content']['ename']}: {data['content']}")
        elif kind == "status" and data["content"]["execution_state"] == "idle":
            done = True
    return out


# -- real jupyter server processes ---------------------------------------------------


class Server:
    """A ``jupyter server`` subprocess with jupyter_cluster and a small client of its
    REST API (see :func:`server`)."""

    def __init__(self, root: Path, token: str, env: dict[str, str] | None = None) -> None:
        self.root, self.token, self.env = root, token, env
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/"
        self.proc: asyncio.subprocess.Process | None = None
        self.http = AsyncHTTPClient(force_instance=True)

    async def start(self) -> None:
        log = open(self.root / f"server-{self.port}.log", "wb")  # noqa: SIM115
        self.proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "jupyter_server",
            f"--port={self.port}",
            "--ip=127.0.0.1",
            "--no-browser",
            "--allow-root",
            f"--IdentityProvider.token={self.token}",
            f"--ServerApp.root_dir={self.root}",
            "--ServerApp.jpserver_extensions=jupyter_cluster=True",
            stdout=log,
            stderr=log,
            env=dict(os.environ) if self.env is None else self.env,
        )

        async def up() -> bool:
            assert self.proc is not None and self.proc.returncode is None, "the server died"
            code, _ = await self.call("GET", "api/status")
            return code == 200

        await eventually(up, 60, "the server to answer", interval=0.3)

    async def call(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        request = HTTPRequest(
            self.url + path,
            method=method,
            body=None if body is None and method != "POST" else json.dumps(body or {}),
            headers={"Authorization": f"token {self.token}"},
            request_timeout=60,
        )
        try:
            response = await self.http.fetch(request, raise_error=False)
        except OSError:
            return 0, None
        text = response.body.decode() if response.body else ""
        if "json" in (response.headers.get("Content-Type") or "") and text:
            return response.code, json.loads(text)
        return response.code, text

    async def session(self, sid: str) -> dict[str, Any]:
        code, data = await self.call("GET", f"{API}/sessions/{sid}")
        assert code == 200, data
        return data

    async def stop(self, sig: int) -> None:
        if self.proc is not None and self.proc.returncode is None:
            self.proc.send_signal(sig)
            await asyncio.wait_for(self.proc.wait(), 60)


@contextlib.asynccontextmanager
async def server(root: Path, env: dict[str, str] | None = None) -> AsyncIterator[Server]:
    """A started :class:`Server` whose root dir (and log) is ``root``, in this process's
    Jupyter dirs (the ``workspace`` fixture's), with ``env`` (else this process's
    environment); SIGKILLed at the end if still running."""
    running = Server(root, uuid.uuid4().hex, env)
    try:
        await running.start()
        yield running
    finally:
        await running.stop(signal.SIGKILL)
