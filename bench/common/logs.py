"""Log throughput, for ``bench_io.py`` (e): readers of one container's log and the
whole case (:func:`bench_logs`).

Each reader reads main1's log from its start, following it, until a marker line,
and counts the lines: ``docker logs -f`` (the floor), ``GET .../logs?follow=1`` of
a running server, and ``ClusterSession.logs(host, follow=True)`` (what ``%cluster
logs --follow`` calls; it prints every line, here into a counter). That last one
makes the notebook API's engine in this process: :func:`close_engine` closes it at
the end of the run.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
from typing import Any

import aiohttp

from common import harness
from common.harness import Timer, progress
from common.server import call, wait_running

#: The line after the printed ones; the bootstrap prints it with printf, so the
#: command (which start-up may echo into the log) does not contain it.
MARKER = "bench-log-end"


def log_bootstrap(lines: int) -> str:
    """The bootstrap command of the log session: ``lines`` numbers, then the marker."""
    return f"seq {lines}; printf 'bench-%s\\n' log-end"


class _Counter:
    """Counts the lines of a byte stream until the marker line (chunks may split it)."""

    def __init__(self) -> None:
        self.lines, self.tail, self.done = 0, b"", False
        self._marker = MARKER.encode()

    def feed(self, chunk: bytes) -> bool:
        """Take a chunk; True once the marker line has been seen."""
        data = self.tail + chunk
        at = data.find(self._marker)
        if at < 0:
            self.lines += chunk.count(b"\n")
            self.tail = data[-(len(self._marker) - 1) :]
            return False
        # The tail's newlines were counted with their chunk (the marker has none).
        self.lines += data.count(b"\n", 0, at) - self.tail.count(b"\n") + 1
        self.done = True
        return True


async def docker_follow(container_id: str) -> tuple[int, float]:
    """``docker logs -f`` from the start until the marker: (lines, seconds)."""
    counter = _Counter()
    with Timer() as timer:
        proc = await asyncio.create_subprocess_exec(
            "docker",
            "logs",
            "-f",
            container_id,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        assert proc.stdout is not None
        try:
            while chunk := await proc.stdout.read(65536):
                if counter.feed(chunk):
                    break
        finally:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await proc.wait()
    if not counter.done:
        raise RuntimeError("docker logs -f ended before the marker")
    return counter.lines, timer.seconds


async def rest_follow(http: aiohttp.ClientSession, url: str) -> tuple[int, float]:
    """``GET {url}`` (a ``logs?follow=1`` URL) until the marker: (lines, seconds)."""
    counter = _Counter()
    with Timer() as timer:
        async with http.get(url) as response:
            if response.status != 200:
                raise RuntimeError(f"GET {url}: {response.status} {await response.text()}")
            async for chunk in response.content.iter_chunked(65536):
                if counter.feed(chunk):
                    break
    if not counter.done:
        raise RuntimeError("the REST log stream ended before the marker")
    return counter.lines, timer.seconds


class _Found(Exception):
    """Raised by the sink when the marker line is printed: it ends the follow."""


class _Sink:
    """A stdout that counts the printed lines and stops at the marker."""

    def __init__(self) -> None:
        self.lines = 0

    def write(self, text: str) -> int:
        self.lines += text.count("\n")
        if MARKER in text:
            raise _Found
        return len(text)

    def flush(self) -> None:
        """Nothing is kept."""


def session_follow(session_id: str, host: str = "main1") -> tuple[int, float]:
    """``ClusterSession.logs(host, follow=True)`` (printing) until the marker:
    (lines, seconds). Blocking: call it in a worker thread."""
    from jupyter_cluster.session import ClusterSession

    session = ClusterSession.attach(session_id)
    sink = _Sink()
    with Timer() as timer, contextlib.redirect_stdout(sink):
        try:
            session.logs(host, follow=True)
        except _Found:
            pass
        else:
            raise RuntimeError("ClusterSession.logs ended before the marker")
    return sink.lines, timer.seconds


async def bench_logs(
    args: argparse.Namespace, http: aiohttp.ClientSession, api: str
) -> list[dict[str, Any]]:
    """Rows of (e): lines/s through REST and ClusterSession.logs against docker logs -f."""
    body = {"size": 1, "cpu": 1, "mem": "256m", "bootstrap": log_bootstrap(args.lines)}
    session = await call(http, "POST", api + "sessions", body)
    url = f"{api}sessions/{session['id']}"
    progress(f"(e) session {session['id'][:8]} prints {args.lines} lines")
    session = await wait_running(http, url, args.timeout)
    container_id = session["containers"][0]["container_id"]
    counts: set[int] = set()

    def rate(lines: int, seconds: float) -> float:
        counts.add(lines)
        return lines / seconds

    async def floor() -> float:
        return rate(*await docker_follow(container_id))

    async def rest() -> float:
        return rate(*await rest_follow(http, url + "/containers/main1/logs?follow=1"))

    async def notebook() -> float:
        return rate(*await asyncio.to_thread(session_follow, session["id"]))

    await floor()  # warm-up: the log file in the page cache
    await rest()
    await notebook()
    rest_rates, floor_rest = await harness.alternate(args.repeat, rest, floor)
    api_rates, floor_api = await harness.alternate(args.repeat, notebook, floor)
    await call(http, "DELETE", url)
    if len(counts) != 1:
        raise RuntimeError(f"the readers saw different numbers of lines: {sorted(counts)}")
    note = f"{counts.pop()} lines each; floor: docker logs -f"
    unit, metric = "lines/s", "throughput"
    return [
        harness.result(
            "io",
            "e: log follow, REST",
            metric,
            rest_rates,
            floor_rest,
            unit=unit,
            goal=0.8,
            higher_is_better=True,
            note=note,
        ),
        harness.result(
            "io",
            "e: log follow, ClusterSession.logs",
            metric,
            api_rates,
            floor_api,
            unit=unit,
            goal=0.8,
            higher_is_better=True,
            note=note,
        ),
    ]


def close_engine() -> None:
    """Close the notebook API's engine of this process (its store is in temporary
    dirs that are about to go), so a later benchmark in the process makes a new one."""
    from jupyter_cluster.background_engine import BackgroundEngine

    BackgroundEngine.discard()
