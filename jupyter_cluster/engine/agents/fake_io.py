"""Inside a fake agent's containers: logs, stats, CPU time, exec, exits and OOM kills.

Mixed into :class:`~.fake.FakeAgent`; tests steer it with ``emit`` (a log line),
``exit`` (the container ends), ``oom`` (an out-of-memory kill) and ``exec_handler``
(what an ``exec`` answers). For the pure core's unit tests only.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

from ...errors import AgentError
from .base import OomEvent, OutputCallback
from .fake_container import ExecCall, ExecHandler, FakeAgentState, FakeContainer, has_labels


class FakeContainerIO(FakeAgentState):
    """What happens inside the containers of a fake agent (see the module)."""

    ooms: list[OomEvent]
    execs: list[ExecCall]
    exec_handler: ExecHandler | None
    _oom_wake: asyncio.Event
    _streams_ended: int

    def emit(self, container_id: str, line: str) -> None:
        """Append a log line (a newline is added if missing) and wake followers."""
        box = self._get(container_id)
        box.lines.append(line if line.endswith("\n") else line + "\n")
        box.wake()

    async def stats(self, container_id: str) -> Mapping[str, Any]:
        """Docker-shaped stats of a running container: ``cpu_percent`` (of one CPU)
        and ``mem_used`` set on the box by a test, the memory limit from its spec."""
        self._enter("stats", container_id)
        box = self._get(container_id)
        if box.status != "running":
            raise AgentError(
                f"agent {self.id}: container {container_id[:12]} is not running", self.id
            )
        busy = int(box.cpu_percent * 1e7)  # of 1e9 system ns over one CPU
        return {
            "read": "2026-01-01T00:00:00.000000000Z",
            "cpu_stats": {
                "cpu_usage": {"total_usage": busy},
                "system_cpu_usage": 10**9,
                "online_cpus": 1,
            },
            "precpu_stats": {"cpu_usage": {"total_usage": 0}, "system_cpu_usage": 0},
            "memory_stats": {"usage": box.mem_used, "limit": box.spec.resources.mem},
            "networks": {"eth0": {"rx_bytes": 10, "tx_bytes": 20}},
            "pids_stats": {"current": 1},
        }

    async def cpu_seconds(self, container_id: str) -> float:
        """The CPU seconds a test set on the running container's box."""
        self._enter("cpu_seconds", container_id)
        box = self._get(container_id)
        if box.status != "running":
            raise AgentError(
                f"agent {self.id}: container {container_id[:12]} is not running", self.id
            )
        return box.cpu_seconds

    def exit(self, container_id: str, code: int = 0, *, oom: bool = False) -> None:
        """Mark a container as exited with ``code`` (``oom``: by the out-of-memory
        killer) now; followed logs end."""
        box = self._get(container_id)
        box.status, box.exit_code, box.oom_killed = "exited", code, oom
        box.finished_at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        box.ports = {}  # Docker releases the published ports
        box.wake()

    def oom(self, container_id: str, at: float | None = None) -> OomEvent:
        """Report that the out-of-memory killer ended a process in the container
        (which keeps running) at ``at`` (default now); followers of oom_events see it."""
        event = OomEvent(self._get(container_id).id, time.time() if at is None else at)
        self.ooms.append(event)
        self._oom_wake.set()
        return event

    def end_streams(self) -> None:
        """End every oom_events follower, as an engine that restarts does."""
        self._streams_ended += 1
        self._oom_wake.set()

    async def oom_events(
        self, labels: Mapping[str, str], *, since: float | None = None
    ) -> AsyncIterator[OomEvent]:
        """The OOM kills reported from now (and since ``since``) in containers with
        ``labels`` (removed ones: by the labels they had), until end_streams()."""
        self._enter("oom_events", "")
        ended, seen = self._streams_ended, len(self.ooms)
        specs = {box.id: box.spec for box in self.containers.values()}
        if since is not None:
            seen = next((i for i, e in enumerate(self.ooms) if e.time >= since), seen)
        while ended == self._streams_ended:
            while seen < len(self.ooms):
                event = self.ooms[seen]
                seen += 1
                box = self.containers.get(event.container_id)
                spec = box.spec if box else specs.get(event.container_id)
                if spec is not None and has_labels(spec.labels, labels):
                    yield event
            self._oom_wake.clear()
            await self._oom_wake.wait()

    def by_host(self, hostname: str) -> FakeContainer:
        """The container with this hostname; KeyError when there is none."""
        return {box.spec.hostname: box for box in self.containers.values()}[hostname]

    async def logs(
        self,
        container_id: str,
        *,
        tail: int | None = None,
        follow: bool = False,
        for_user: bool = False,
    ) -> AsyncIterator[str]:
        """Lines emitted so far (the last ``tail``), then, with ``follow`` and while
        the container runs, new ones until it exits or is removed."""
        self._enter("logs", container_id)
        box = self._get(container_id)
        i = 0 if tail is None else max(0, len(box.lines) - tail)
        while True:
            while i < len(box.lines):
                i += 1
                yield box.lines[i - 1]
            if not follow or box.status != "running":
                return
            waiter = asyncio.get_running_loop().create_future()
            box.waiters.append(waiter)
            await waiter

    async def exec(
        self,
        container_id: str,
        cmd: Sequence[str],
        *,
        user: str = "work",
        workdir: str = "/home/work",
        env: Mapping[str, str] | None = None,
        on_output: OutputCallback | None = None,
    ) -> int:
        """Record the call and answer with ``exec_handler`` (default: exit 0, no output)."""
        box = self._get(container_id)
        self._enter("exec", container_id, box.spec.hostname)
        if box.status != "running":
            raise AgentError(f"agent {self.id}: container {container_id} is not running", self.id)
        call = ExecCall(container_id, tuple(cmd), user, workdir, dict(env or {}))
        self.execs.append(call)
        code, out = self.exec_handler(box, call) if self.exec_handler else (0, b"")
        if out and on_output is not None:
            result = on_output(1, out)
            if inspect.isawaitable(result):
                await result
        return code
