"""Inside a Docker agent's containers: their logs, stats, CPU time and ``exec``.

Mixed into :class:`~.agent.DockerAgent`; every call goes through its
:class:`~.connection.DockerConnection`. Logs and ``exec`` output come over the
connection's stream clients (no read timeout), decoded by :mod:`.logs` and split into
lines here.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

import aiohttp
from aiodocker.exceptions import DockerError

from ....core.lines import LineSplitter
from ....errors import AgentError
from ..base import AgentConfig, OutputCallback
from . import cpu_counter, host_cgroup
from .connection import DockerConnection
from .logs import FOLLOW_GATHER, log_response, log_text


class DockerContainerIO:
    """Reading and running things in containers of one Docker engine."""

    config: AgentConfig
    connection: DockerConnection

    async def stats(self, container_id: str) -> Mapping[str, Any]:
        """One sample of the container's stats (Docker measures CPU over ~1 s)."""
        conn = self.connection
        container = conn.client.containers.container(container_id)
        found = await conn.call(
            f"reading stats of {container_id[:12]}", container.stats(stream=False)
        )
        sample: Mapping[str, Any] = found[0] if isinstance(found, list) and found else {}
        # Docker answers a container that does not run with an empty sample read at
        # 0001-01-01; say so, as for any call that needs a running container.
        if not sample or str(sample.get("read", "")).startswith("0001-01-01"):
            raise AgentError(
                f"agent {self.config.id}: container {container_id[:12]} is not running",
                self.config.id,
            )
        return sample

    async def cpu_seconds(self, container_id: str) -> float:
        """CPU seconds the container used so far: from its cgroup file when this
        machine's engine runs it (:mod:`.host_cgroup`), else whichever answers first
        of its cgroup's counter read with a short exec and Docker's cumulative counter
        from a one-shot stats read (see :mod:`.cpu_counter`)."""
        if self.config.is_this_machine:
            found = host_cgroup.cpu_seconds(container_id)
            if found is not None:
                return found
        return await cpu_counter.first_of(
            cpu_counter.read(self, container_id), self._stats_cpu_seconds(container_id)
        )

    async def _stats_cpu_seconds(self, container_id: str) -> float:
        """Docker's cumulative CPU counter from a one-shot stats read (no second
        sample to wait for, unlike :meth:`stats`)."""
        conn = self.connection
        found = await conn.call(
            f"reading the CPU time of {container_id[:12]}",
            conn.client._query_json(
                f"containers/{container_id}/stats", params={"stream": "0", "one-shot": "1"}
            ),
        )
        sample: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
        if not sample or str(sample.get("read", "")).startswith("0001-01-01"):
            raise AgentError(
                f"agent {self.config.id}: container {container_id[:12]} is not running",
                self.config.id,
            )
        usage = (sample.get("cpu_stats") or {}).get("cpu_usage") or {}
        return int(usage.get("total_usage") or 0) / 1e9

    async def logs(
        self,
        container_id: str,
        *,
        tail: int | None = None,
        follow: bool = False,
        for_user: bool = False,
    ) -> AsyncIterator[str]:
        """Yield whole lines of the container's log; ``follow`` waits for more.

        Only the engine's own containers are read here, and it never gives one a
        TTY, so the log is always framed: no inspect first (a round trip on the
        way to every container's readiness)."""
        conn = self.connection
        action = f"reading logs of {container_id[:12]}"
        params: dict[str, Any] = {"tail": "all" if tail is None else str(max(tail, 0))}
        splitter = LineSplitter()  # bounded: a 100 MB line arrives in 64 KiB pieces
        # Streamed whether or not it follows, so a long log is never held whole.
        # Not container.log(): it reads the whole log into a list, and with
        # follow=True aiodocker never releases the response, so a reader that
        # stops early would keep its connection. This one is closed on every
        # exit, and it is the stream client's (no read timeout).
        query = log_response(
            conn.user_stream_client if for_user else conn.stream_client,
            container_id,
            {"stdout": "1", "stderr": "1", "follow": "1" if follow else "0", **params},
        )
        try:
            async with query as response:
                conn.answered()
                gather = FOLLOW_GATHER if follow and for_user else 0.0
                async for chunk in log_text(response, False, gather):
                    for line in splitter.feed(chunk):
                        yield line
        except (DockerError, aiohttp.ClientError, OSError, asyncio.TimeoutError) as exc:
            raise conn.failure(action, exc) from exc
        rest = splitter.flush()
        if rest:
            yield rest

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
        """Run ``cmd``, stream its output to ``on_output``, return its exit code.

        The command may run (and be silent) for as long as it likes: its output
        comes over the stream client, which has no read timeout.
        """
        conn = self.connection
        action = f"running {' '.join(cmd)[:60]!r}"
        container = conn.stream_client.containers.container(container_id)
        execution = await conn.call(
            action,
            container.exec(list(cmd), user=user, workdir=workdir, environment=dict(env or {})),
        )
        try:
            async with execution.start(detach=False) as stream:
                while True:
                    message = await stream.read_out()
                    if message is None:
                        break
                    if on_output is not None:
                        result = on_output(message.stream, message.data)
                        if inspect.isawaitable(result):
                            await result
        except (DockerError, aiohttp.ClientError, OSError) as exc:
            raise conn.failure(action, exc) from exc
        for _ in range(50):
            data = await conn.call(action, execution.inspect())
            if not data.get("Running"):
                break
            await asyncio.sleep(0.02)
        return int(data.get("ExitCode") or 0)
