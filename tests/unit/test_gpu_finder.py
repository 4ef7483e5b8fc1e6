"""GpuFinder: an agent's GPUs are found once per connection, bounded, never fatal.

The Docker probe is replaced by a canned run (what nvidia-smi would print), so this
checks the rules around it without Docker: a configured list wins and no probe
runs; engines without the nvidia runtime are not probed; a probe runs once and is
kept across the frequent ``info`` calls (also concurrent ones); it runs again after
the agent was unreachable or its engine changed; a failed or slow probe gives 0
GPUs with a note, and is retried only after ``retry`` seconds.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import replace

from jupyter_cluster.core.gpus import GpuProbe
from jupyter_cluster.engine.agents.base import AgentConfig
from jupyter_cluster.engine.agents.docker.connection import DockerConnection
from jupyter_cluster.engine.agents.docker.gpus import GpuFinder
from jupyter_cluster.errors import AgentError

TWO = (
    "0, GPU-11111111-2222-3333-4444-555555555555, NVIDIA L4, 23034 MiB\n"
    "1, GPU-66666666-7777-8888-9999-000000000000, NVIDIA L4, 23034 MiB\n"
)
NVIDIA_INFO = {"ID": "engine-1", "Runtimes": {"runc": {}, "nvidia": {}}}
PLAIN_INFO = {"ID": "engine-1", "Runtimes": {"runc": {}}}


class Canned:
    """A stand-in probe: answers ``answer`` (or raises it, or sleeps ``delay`` first)."""

    def __init__(self, answer: tuple[int, str, str] | Exception, delay: float = 0.0) -> None:
        self.answer = answer
        self.delay = delay
        self.calls: list[GpuProbe] = []

    async def __call__(self, probe: GpuProbe) -> tuple[int, str, str]:
        self.calls.append(probe)
        await asyncio.sleep(self.delay)
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


class Clock:
    """A monotonic clock the test moves."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def finder(
    run: Canned, clock: Clock | None = None, **config: object
) -> tuple[GpuFinder, AgentConfig]:
    base = AgentConfig(id="gpu1", gpu_probe=GpuProbe(timeout=2.0, retry=60.0))
    cfg = replace(base, **config)  # type: ignore[arg-type]
    return GpuFinder(DockerConnection(cfg), cfg, run=run, clock=clock or Clock()), cfg


async def test_detected_gpus_are_kept_across_info_calls() -> None:
    run = Canned((0, TWO, ""))
    found, _ = finder(run)
    reports = [await found.report(NVIDIA_INFO) for _ in range(5)]
    assert len(run.calls) == 1 and found.probes == 1
    assert reports[0].ids == ("0", "1") and reports[0].note == ""
    assert [d.name for d in reports[0].devices] == ["NVIDIA L4", "NVIDIA L4"]
    assert all(r == reports[0] for r in reports)


async def test_concurrent_info_calls_share_one_probe() -> None:
    run = Canned((0, TWO, ""), delay=0.05)
    found, _ = finder(run)
    reports = await asyncio.gather(*(found.report(NVIDIA_INFO) for _ in range(8)))
    assert len(run.calls) == 1 and {r.ids for r in reports} == {("0", "1")}


async def test_a_configured_list_wins_and_nothing_is_probed() -> None:
    run = Canned((0, TWO, ""))
    found, _ = finder(run, gpus=("3",))
    report = await found.report(NVIDIA_INFO)
    assert report.ids == ("3",) and report.devices == () and run.calls == []


async def test_no_nvidia_runtime_no_probe_unless_always_and_never_means_never() -> None:
    run = Canned((0, TWO, ""))
    found, _ = finder(run)
    assert (await found.report(PLAIN_INFO)).ids == () and run.calls == []
    always, _ = finder(run, gpu_probe=GpuProbe(mode="always"))
    assert (await always.report(PLAIN_INFO)).ids == ("0", "1") and len(run.calls) == 1
    never, _ = finder(run, gpu_probe=GpuProbe(mode="never"))
    assert (await never.report(NVIDIA_INFO)).ids == () and len(run.calls) == 1


async def test_the_probe_is_run_again_when_the_agent_comes_back_or_changed() -> None:
    run = Canned((0, TWO, ""))
    found, _ = finder(run)
    await found.report(NVIDIA_INFO)
    found.forget()  # what info() does when the engine does not answer
    await found.report(NVIDIA_INFO)
    assert len(run.calls) == 2
    await found.report({**NVIDIA_INFO, "ID": "engine-2"})  # another engine behind the URL
    assert len(run.calls) == 3
    await found.report({**NVIDIA_INFO, "ID": "engine-2"})
    assert len(run.calls) == 3


async def test_a_failed_probe_offers_no_gpu_and_is_retried_later() -> None:
    clock = Clock()
    run = Canned(AgentError("agent gpu1: detecting GPUs failed: unknown runtime nvidia", "gpu1"))
    found, _ = finder(run, clock)
    report = await found.report(NVIDIA_INFO)
    assert report.ids == () and report.note == (
        "GPU detection failed: unknown runtime nvidia; 0 GPUs offered; tried again in 60 s"
    )
    clock.now += 59
    assert await found.report(NVIDIA_INFO) == report and len(run.calls) == 1
    run.answer = (0, TWO, "")
    clock.now += 2
    assert (await found.report(NVIDIA_INFO)).ids == ("0", "1") and len(run.calls) == 2
    clock.now += 10_000  # a success is kept, however old
    await found.report(NVIDIA_INFO)
    assert len(run.calls) == 2


async def test_nvidia_smi_failing_is_a_failed_probe() -> None:
    clock = Clock()
    run = Canned((9, "", "NVIDIA-SMI has failed because it couldn't communicate with the driver"))
    found, _ = finder(run, clock)
    report = await found.report(NVIDIA_INFO)
    assert report.ids == () and "exit code 9" in report.note
    assert "couldn't communicate" in report.note
    clock.now += 61
    await found.report(NVIDIA_INFO)
    assert len(run.calls) == 2


async def test_a_probe_that_hangs_is_cut_at_its_timeout() -> None:
    run = Canned((0, TWO, ""), delay=30)
    found, _ = finder(run, gpu_probe=GpuProbe(timeout=0.2, retry=60.0))
    started = time.monotonic()
    report = await found.report(NVIDIA_INFO)
    assert time.monotonic() - started < 5
    assert report.ids == () and "did not answer within 0.2 s" in report.note
