"""The kernel process inside main1: start, poll, signal, wait.

Used by :class:`~jupyter_cluster.provisioner.ClusterProvisioner`. The kernel runs
as ``work`` through an attached ``docker exec``, so its end is noticed the moment
it happens (poll/wait need no round trip). Its stdout/stderr go to a FIFO that the
start-up script copies into the container's log. A pid file lets a re-attached
server signal and poll a kernel it did not start.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Mapping, Sequence

from . import naming
from .agents.base import Agent, FileEntry
from .errors import AgentError

RUN_DIR = f"{naming.RUNTIME_DIR}/run"
LOG_FIFO = f"{RUN_DIR}/log.fifo"
# $0 is a label; "$@" the kernel's argv. The pid file is written before exec, so
# the pid is the kernel's own.
_WRAPPER = 'echo $$ > "$JC_PID_FILE"; exec "$@" >>' + LOG_FIFO + " 2>&1"


class KernelProcess:
    """One kernel process in a container, seen from the server."""

    def __init__(self, agent: Agent, container_id: str, kernel_id: str) -> None:
        self.agent = agent
        self.container_id = container_id
        self.connection_file = f"{RUN_DIR}/kernel-{kernel_id}.json"
        self.pid_file = f"{RUN_DIR}/kernel-{kernel_id}.pid"
        self._task: asyncio.Task[int] | None = None

    async def start(self, cmd: Sequence[str], connection: bytes, env: Mapping[str, str]) -> None:
        """Write the in-container connection file and start ``cmd`` as work."""
        uid = naming.WORK_UID
        await self.agent.put_files(
            self.container_id,
            [FileEntry(self.connection_file, connection, 0o600, uid, uid)],
        )
        await self._sh(f'rm -f "{self.pid_file}"')
        self._task = asyncio.ensure_future(
            self.agent.exec(
                self.container_id,
                ["/bin/sh", "-c", _WRAPPER, "jupyter-cluster-kernel", *cmd],
                env={**env, "JC_PID_FILE": self.pid_file},
            )
        )

    async def _sh(self, script: str) -> int:
        return await self.agent.exec(self.container_id, ["/bin/sh", "-c", script])

    async def poll(self) -> int | None:
        """None while the kernel runs, else its exit code."""
        if self._task is not None:
            if not self._task.done():
                return None
            if self._task.cancelled() or self._task.exception() is not None:
                return -1
            return self._task.result()
        try:
            alive = await self._sh(f'kill -0 "$(cat "{self.pid_file}")" 2>/dev/null')
        except AgentError:
            return -1
        return None if alive == 0 else 1

    async def wait(self) -> int:
        """Wait until the kernel process ends; its exit code."""
        if self._task is not None:
            with contextlib.suppress(AgentError):
                return await asyncio.shield(self._task)
            return -1
        while (code := await self.poll()) is None:
            await asyncio.sleep(0.2)
        return code

    async def signal(self, signum: int) -> None:
        """Send ``signum`` to the kernel (its process group when it leads one)."""
        name = signal.Signals(signum).name.removeprefix("SIG")
        pid_file = self.pid_file
        script = (
            f'for i in 1 2 3 4 5 6 7 8 9 10; do [ -s "{pid_file}" ] && break; sleep 0.1; done; '
            f'p=$(cat "{pid_file}" 2>/dev/null) || exit 0; '
            f"kill -s {name} -- -$p 2>/dev/null || kill -s {name} $p 2>/dev/null; exit 0"
        )
        with contextlib.suppress(AgentError):
            await self._sh(script)

    async def close(self) -> None:
        """Stop watching the process (it should have ended already)."""
        if self._task is not None and not self._task.done():
            self._task.cancel()
            with contextlib.suppress(BaseException):
                await self._task
        self._task = None
