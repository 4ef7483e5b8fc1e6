"""What following a busy session costs, for ``bench_follow.py``: log writers in the
containers, the streams the Lab keeps open, and the floor (``docker logs -f``).

:func:`start_writers` makes every container print ``rate`` lines a second into its
own log (a root ``docker exec -d`` writing to PID 1's standard output, which is
the container's log). :class:`LabFollowers` holds what a JupyterLab following the
session holds open: the events stream, the session's stats stream, one followed
log per container (more than the Lab, which follows the visible log tab only) and
a ``GET agents`` every few seconds, as its sidebar polls. :func:`docker_follow_window`
is the floor: one ``docker logs -f`` per container for a window, its CPU read
from each process's ``rusage`` when it is reaped.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import threading
import time
from typing import Any

import aiohttp

#: The sidebar's agents poll, in seconds.
AGENTS_POLL = 5.0
#: What a Lab following a session holds open (all by default; fewer to see what each
#: part costs).
PARTS = frozenset({"logs", "stats", "events", "agents"})
#: Characters in each line the writers print (the newline not counted).
LINE_WIDTH = 79


def writer_script(rate: int) -> str:
    """A shell loop printing ``rate`` lines a second (in ten batches) to PID 1's
    standard output."""
    per_tick = max(rate // 10, 1)
    line = "x" * LINE_WIDTH
    batch = " ".join([f"{line}"] * per_tick)
    return f"exec >/proc/1/fd/1; while :; do printf '%s\\n' {batch}; sleep 0.1; done"


def start_writers(container_ids: list[str], rate: int) -> None:
    """Start the log writer in every container (it ends with its container)."""
    script = writer_script(rate)
    for cid in container_ids:
        subprocess.run(
            ["docker", "exec", "-d", "-u", "0", cid, "/bin/sh", "-c", script],
            check=True,
            capture_output=True,
        )


class _Stream:
    """One streaming GET whose bytes (and ``event: stats`` lines) are counted."""

    def __init__(self, http: aiohttp.ClientSession, url: str) -> None:
        self.http, self.url = http, url
        self.bytes = 0
        self.stats = 0
        self.response: aiohttp.ClientResponse | None = None
        self.task: asyncio.Task[None] | None = None

    async def open(self) -> None:
        """Send the request and start reading."""
        self.response = await self.http.get(self.url)
        if self.response.status != 200:
            raise RuntimeError(f"GET {self.url}: {self.response.status}")
        self.task = asyncio.ensure_future(self._read(self.response))

    async def _read(self, response: aiohttp.ClientResponse) -> None:
        async for chunk in response.content.iter_any():
            self.bytes += len(chunk)
            self.stats += chunk.count(b"event: stats")

    async def close(self) -> None:
        """Go away, as a closed browser tab does."""
        if self.response is not None:
            self.response.close()
        if self.task is not None:
            self.task.cancel()
            await asyncio.gather(self.task, return_exceptions=True)


class LabFollowers:
    """What a Lab following the session holds open, for an ``async with`` (see the
    module docstring); ``log_bytes`` and ``stats_samples`` say what came through."""

    def __init__(
        self,
        http: aiohttp.ClientSession,
        api: str,
        session: dict[str, Any],
        parts: frozenset[str] = PARTS,
    ) -> None:
        base = f"{api}sessions/{session['id']}"
        self.http, self.api, self.parts = http, api, parts
        self.logs = [
            _Stream(http, f"{base}/containers/{c['host']}/logs?follow=1&tail=0")
            for c in session["containers"]
            if "logs" in parts
        ]
        self.stats = _Stream(http, f"{base}/stats?follow=1")
        self.others = [_Stream(http, f"{api}events")] if "events" in parts else []
        if "stats" in parts:
            self.others.append(self.stats)
        self._poll: asyncio.Task[None] | None = None
        self.polls = 0

    async def __aenter__(self) -> LabFollowers:
        for stream in (*self.others, *self.logs):
            await stream.open()
        if "agents" in self.parts:
            self._poll = asyncio.ensure_future(self._agents())
        deadline = time.monotonic() + 60
        while min((s.bytes for s in self.logs), default=1) == 0 or (
            "stats" in self.parts and self.stats.stats == 0
        ):
            if time.monotonic() > deadline:
                raise RuntimeError("a followed log or the stats stream gave nothing in 60 s")
            await asyncio.sleep(0.05)
        return self

    async def _agents(self) -> None:
        while True:
            async with self.http.get(self.api + "agents") as response:
                await response.read()
            self.polls += 1
            await asyncio.sleep(AGENTS_POLL)

    @property
    def log_bytes(self) -> int:
        """Bytes of log read so far, over every followed log."""
        return sum(s.bytes for s in self.logs)

    @property
    def stats_samples(self) -> int:
        """Stats events read so far."""
        return self.stats.stats

    async def __aexit__(self, *exc: object) -> None:
        if self._poll is not None:
            self._poll.cancel()
            await asyncio.gather(self._poll, return_exceptions=True)
        for stream in (*self.logs, *self.others):
            await stream.close()


def _drain(pipe: Any, counted: list[int]) -> None:
    while chunk := pipe.read1(65536):
        counted[0] += len(chunk)


def docker_follow_window(container_ids: list[str], seconds: float) -> tuple[float, int]:
    """``docker logs -f --tail 0`` of every container for ``seconds``: the CPU seconds
    those processes used (from their ``rusage``) and the bytes they printed."""
    procs, readers = [], []
    counted = [[0] for _ in container_ids]  # one counter per reader thread
    for cid, count in zip(container_ids, counted, strict=True):
        proc = subprocess.Popen(
            ["docker", "logs", "-f", "--tail", "0", cid],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        procs.append(proc)
        reader = threading.Thread(target=_drain, args=(proc.stdout, count), daemon=True)
        reader.start()
        readers.append(reader)
    time.sleep(seconds)
    used = 0.0
    for proc in procs:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
        used += usage.ru_utime + usage.ru_stime
    for reader in readers:
        reader.join(5)
    for proc in procs:
        assert proc.stdout is not None
        proc.stdout.close()
    return used, sum(c[0] for c in counted)
