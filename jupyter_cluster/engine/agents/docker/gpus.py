"""Finding an agent's GPUs: ``nvidia-smi`` in a throwaway container, once per connection.

:meth:`DockerAgent.info` (the frequent health probe) asks :class:`GpuFinder` for the
agent's GPUs each time; the finder answers from what it found before, and probes
only when it has nothing yet for this engine: on the first reachable ``info``,
again after the agent was unreachable (:meth:`GpuFinder.forget`) or its engine
changed, and again after a failed probe once ``retry`` seconds have passed.

A probe runs :data:`~jupyter_cluster.core.gpus.NVIDIA_SMI_LIST` in a short-lived
container of the probe image (any image: the NVIDIA runtime mounts ``nvidia-smi``
into it) with the probe's runtime (``nvidia``), every GPU visible and no network;
the container is removed whatever happens. It is bounded by the probe's timeout,
and it never makes the agent unreachable: whatever goes wrong gives no GPUs and a
note saying why. A configured ``gpus`` list wins: no probe runs. Which engines are
probed at all is :func:`~jupyter_cluster.core.gpus.wants_probe`'s rule (by default
only those whose ``docker info`` lists an ``nvidia`` runtime).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ....asyncwait import within
from ....core.gpus import NVIDIA_SMI_LIST, GpuProbe, GpuReport, pinned, probe_outcome, wants_probe
from ....core.naming import DEFAULT_IMAGE, LABEL_PREFIX
from ....errors import AgentError
from ..base import AgentConfig
from .connection import DockerConnection

#: Label on the probe's containers (whoever finds one left behind knows what it was).
LABEL_GPU_PROBE = LABEL_PREFIX + "gpu-probe"
ACTION = "detecting GPUs"  # how the agent's errors name the probe
#: Bytes of the probe's output kept (a line per GPU is about 100).
MAX_OUTPUT = 64 * 1024

#: Runs one probe: (exit code, stdout, stderr).
ProbeRun = Callable[[GpuProbe], Awaitable[tuple[int, str, str]]]


@dataclass(frozen=True)
class _Found:
    engine: str  # the engine's ID (docker info), so another engine behind the URL is probed
    at: float
    report: GpuReport
    failed: bool


def probe_body(probe: GpuProbe, agent_id: str) -> dict[str, Any]:
    """The create-container body of a probe: nvidia-smi with every GPU visible."""
    return {
        "Image": probe.image or DEFAULT_IMAGE,
        "User": "0",
        "Entrypoint": [NVIDIA_SMI_LIST[0]],
        "Cmd": list(NVIDIA_SMI_LIST[1:]),
        "Env": ["NVIDIA_VISIBLE_DEVICES=all", "NVIDIA_DRIVER_CAPABILITIES=utility"],
        "Labels": {LABEL_GPU_PROBE: agent_id},
        "NetworkDisabled": True,
        "HostConfig": {
            "Runtime": probe.runtime,
            "NetworkMode": "none",
            "SecurityOpt": ["no-new-privileges"],
            "PidsLimit": 64,
        },
    }


async def run_probe(conn: DockerConnection, probe: GpuProbe) -> tuple[int, str, str]:
    """Run one probe on ``conn``'s engine; (exit code, stdout, stderr). The caller
    bounds it in time; the container goes whatever happens (also when cancelled)."""
    body = probe_body(probe, conn.config.id)
    image = body["Image"]
    action = ACTION
    if not await conn.call(
        f"inspecting image {image}", conn.client.images.inspect(image), missing=None
    ):
        raise AgentError(
            f"the GPU probe's image {image} is not on agent {conn.config.id} "
            "(build or pull it there, or set GpuDetection.image)",
            conn.config.id,
        )
    helper = await conn.call(action, conn.client.containers.create(body))
    try:
        await conn.call(action, helper.start())
        # The stream client has no read timeout: the caller's bound is the only one.
        waiting = conn.stream_client.containers.container(helper.id).wait()
        result = await conn.call(action, waiting)
        out = await conn.call(action, helper.log(stdout=True, stderr=False))
        err = await conn.call(action, helper.log(stdout=False, stderr=True))
        code = int(result.get("StatusCode", -1))
        return code, "".join(out)[:MAX_OUTPUT], "".join(err)[:MAX_OUTPUT]
    finally:
        with contextlib.suppress(AgentError):
            await conn.call(action, helper.delete(force=True), missing=None, gone=(404, 409))


class GpuFinder:
    """The GPUs of one agent, found once per connection (see the module docstring).

    ``run`` replaces the Docker probe (unit tests); ``clock`` the monotonic clock.
    """

    def __init__(
        self,
        conn: DockerConnection,
        config: AgentConfig,
        run: ProbeRun | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.config = config
        self._run: ProbeRun = run or (lambda probe: run_probe(conn, probe))
        self._clock = clock
        self._found: _Found | None = None
        self._lock = asyncio.Lock()  # concurrent info() calls share one probe
        #: Probes run so far (tests and logs read it).
        self.probes = 0

    def forget(self) -> None:
        """The agent could not be reached: probe again when it answers."""
        self._found = None

    async def report(self, docker_info: Mapping[str, Any]) -> GpuReport:
        """The agent's GPUs, given its engine's ``docker info`` (just read)."""
        fixed = pinned(self.config.gpus)
        if fixed is not None:
            return fixed
        probe = self.config.gpu_probe
        if not wants_probe(probe.mode, docker_info.get("Runtimes")):
            return GpuReport()
        engine = str(docker_info.get("ID") or "")
        async with self._lock:
            found = self._found
            fresh = found is not None and (
                not found.failed or self._clock() - found.at < probe.retry
            )
            if found is not None and fresh and found.engine == engine:
                return found.report
            report, failed = await self._probe(probe)
            self._found = _Found(engine, self._clock(), report, failed)
            return report

    async def _probe(self, probe: GpuProbe) -> tuple[GpuReport, bool]:
        """One probe, bounded by its timeout; (report, whether it failed)."""
        self.probes += 1
        retry = f"0 GPUs offered; tried again in {probe.retry:g} s"
        try:
            code, out, err = await within(self._run(probe), probe.timeout)
        except asyncio.TimeoutError:
            why = f"nvidia-smi did not answer within {probe.timeout:g} s"
            return GpuReport(note=f"GPU detection failed: {why}; {retry}"), True
        except AgentError as exc:
            why = exc.message.removeprefix(f"agent {self.config.id}: {ACTION} failed: ")
            return GpuReport(note=f"GPU detection failed: {why[:300]}; {retry}"), True
        report = probe_outcome(code, out, err)
        if code != 0:
            return GpuReport(note=f"{report.note}; {retry}"), True
        return report, False
