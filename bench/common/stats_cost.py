"""What serving live stats costs, for ``bench_stats.py``: CPU and RSS of a process over
a window, followers of the stats stream, and the floor (``docker stats --no-stream``
run once per interval).

CPU is read from ``/proc/PID/stat`` (user + system time, in clock ticks: 10 ms at
100 Hz, so windows are seconds long); the floor's CPU is the ``rusage`` of each
``docker stats`` process, read when it is reaped (``os.wait4``), so nothing else
this process runs is counted.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import aiohttp

from common.server import process_sample

_TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds process ``pid`` has used so far."""
    stat = Path(f"/proc/{pid}/stat").read_bytes()
    fields = stat[stat.rindex(b")") + 2 :].split()  # after the command name
    return (int(fields[11]) + int(fields[12])) / _TICK


def dockerd_pid() -> int | None:
    """The Docker engine's pid when exactly one ``dockerd`` is visible here, else None."""
    found = subprocess.run(["pidof", "dockerd"], capture_output=True, text=True).stdout.split()
    return int(found[0]) if len(found) == 1 else None


@dataclass(frozen=True)
class Window:
    """What a process used over one window: CPU (cores: CPU seconds per wall second),
    RSS at its end (MB), and the Docker engine's CPU meanwhile (cores; NaN if unseen)."""

    cpu: float
    rss_mb: float
    dockerd: float


async def window(pid: int, seconds: float, engine: int | None) -> Window:
    """Measure process ``pid`` (and the engine ``engine``) for ``seconds``."""
    start, cpu0 = time.monotonic(), cpu_seconds(pid)
    engine0 = cpu_seconds(engine) if engine else 0.0
    await asyncio.sleep(seconds)
    wall = time.monotonic() - start
    used = (cpu_seconds(engine) - engine0) / wall if engine else float("nan")
    return Window((cpu_seconds(pid) - cpu0) / wall, process_sample(pid)["rss_mb"], used)


class Followers:
    """``n`` clients of ``GET …/stats?follow=1`` for the time of an ``async with``;
    ``samples`` counts the ``stats`` events each has read."""

    def __init__(self, http: aiohttp.ClientSession, url: str, n: int) -> None:
        self.http, self.url, self.n = http, url, n
        self.samples = [0] * n
        self._responses: list[aiohttp.ClientResponse] = []
        self._tasks: list[asyncio.Task[None]] = []

    async def __aenter__(self) -> Followers:
        for i in range(self.n):
            response = await self.http.get(self.url)
            if response.status != 200:
                raise RuntimeError(f"GET {self.url}: {response.status} {await response.text()}")
            self._responses.append(response)
            self._tasks.append(asyncio.ensure_future(self._read(i, response)))
        deadline = time.monotonic() + 60
        while min(self.samples) < 1:  # every stream has begun (its first sample)
            if time.monotonic() > deadline or any(t.done() for t in self._tasks):
                raise RuntimeError(f"a stats stream gave nothing: {self.samples}")
            await asyncio.sleep(0.05)
        return self

    async def _read(self, i: int, response: aiohttp.ClientResponse) -> None:
        async for line in response.content:
            if line.startswith(b"event: stats"):
                self.samples[i] += 1
            elif line.startswith(b"event: end"):
                raise RuntimeError(f"the stats stream ended: {line!r}")

    async def __aexit__(self, *exc: object) -> None:
        for response in self._responses:
            response.close()  # the client goes away, as a closed browser tab does
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)


def docker_stats_once(ids: list[str]) -> float:
    """Run ``docker stats --no-stream`` for the containers ``ids`` once; its CPU seconds
    (it must print one line per container)."""
    command = ["docker", "stats", "--no-stream", "--format", "{{json .}}", *ids]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert proc.stdout is not None
    out = proc.stdout.read()
    proc.stdout.close()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
    if proc.returncode != 0 or len(out.splitlines()) != len(ids):
        raise RuntimeError(f"docker stats failed ({proc.returncode}): {out[:300]!r}")
    return usage.ru_utime + usage.ru_stime


async def floor_window(
    ids: list[str], seconds: float, interval: float, engine: int | None
) -> tuple[Window, int]:
    """``docker stats --no-stream`` of ``ids`` started every ``interval`` seconds (the
    next one when the last is done, if it took longer) for ``seconds``: its CPU per
    wall second, and how many runs."""
    start = time.monotonic()
    engine0 = cpu_seconds(engine) if engine else 0.0
    used, runs = 0.0, 0
    while time.monotonic() - start < seconds:
        began = time.monotonic()
        used += await asyncio.to_thread(docker_stats_once, ids)
        runs += 1
        await asyncio.sleep(max(interval - (time.monotonic() - began), 0))
    wall = time.monotonic() - start
    engine_used = (cpu_seconds(engine) - engine0) / wall if engine else float("nan")
    return Window(used / wall, 0.0, engine_used), runs
