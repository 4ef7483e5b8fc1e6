"""GPU detection through a real Docker engine, with a stand-in ``nvidia-smi``.

No GPU exists here. What is real: the Docker agent's ``info`` on the local engine,
the probe container it creates, starts, waits for, reads and removes, and the
answer it keeps. What stands in: the runtime (``runc`` in place of ``nvidia``) and
``nvidia-smi`` (a script in an image built from the kernel image, which prints
canned output only when asked the probe's exact question with every GPU visible,
as the NVIDIA runtime's would). So the whole path from ``docker info`` to the
agent's GPU ids runs; the NVIDIA runtime and driver themselves do not.
"""

from __future__ import annotations

import subprocess
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from jupyter_cluster.core.gpus import GpuProbe
from jupyter_cluster.engine.agents.base import AgentConfig
from jupyter_cluster.engine.agents.docker.agent import DockerAgent
from jupyter_cluster.engine.agents.docker.gpus import LABEL_GPU_PROBE
from tests.support.constants import IMAGE
from tests.support.docker import docker

pytestmark = pytest.mark.docker

FAKE_SMI = "jupyter-cluster/test-fake-nvidia-smi:latest"
HANGING_SMI = "jupyter-cluster/test-fake-nvidia-smi:hang"
CANNED = (
    "0, GPU-0e4a5d1c-1111-4b7a-9a55-2f1c3b4d5e60, NVIDIA H100 80GB HBM3, 81559 MiB\n"
    "1, GPU-0e4a5d1c-2222-4b7a-9a55-2f1c3b4d5e61, NVIDIA H100 80GB HBM3, 81559 MiB\n"
    "2, GPU-0e4a5d1c-3333-4b7a-9a55-2f1c3b4d5e62, NVIDIA H100 80GB HBM3, 81559 MiB\n"
)
SCRIPT = """#!/bin/sh
# Stands in for nvidia-smi: answers only the probe's question, with every GPU visible.
if [ "$(cat /etc/fake-nvidia-smi.mode)" = hang ]; then sleep 600; fi
if [ "$NVIDIA_VISIBLE_DEVICES" != all ]; then
  echo "NVIDIA_VISIBLE_DEVICES is '$NVIDIA_VISIBLE_DEVICES', not all" >&2; exit 6
fi
if [ "$*" != "--query-gpu=index,uuid,name,memory.total --format=csv,noheader" ]; then
  echo "unexpected arguments: $*" >&2; exit 2
fi
cat /etc/fake-gpus.csv
"""
DOCKERFILE = f"""FROM {IMAGE}
USER root
ARG MODE=list
COPY nvidia-smi /usr/local/bin/nvidia-smi
COPY fake-gpus.csv /etc/fake-gpus.csv
RUN chmod 755 /usr/local/bin/nvidia-smi && echo "$MODE" > /etc/fake-nvidia-smi.mode
"""


@pytest.fixture(scope="module")
def fake_smi_images(tmp_path_factory: pytest.TempPathFactory) -> None:
    """The kernel image with the stand-in nvidia-smi (listing, and hanging)."""
    context = tmp_path_factory.mktemp("fake-smi")
    (context / "Dockerfile").write_text(DOCKERFILE)
    (context / "nvidia-smi").write_text(SCRIPT)
    (context / "fake-gpus.csv").write_text(CANNED)
    for tag, mode in ((FAKE_SMI, "list"), (HANGING_SMI, "hang")):
        subprocess.run(
            ["docker", "build", "-q", "--build-arg", f"MODE={mode}", "-t", tag, str(context)],
            check=True,
            capture_output=True,
            text=True,
            timeout=300,
        )


def probes_left(agent_id: str) -> list[str]:
    """Probe containers of ``agent_id`` still on the engine (there must be none)."""
    out = docker("ps", "-aq", "--filter", f"label={LABEL_GPU_PROBE}={agent_id}").stdout
    return out.split()


@pytest.fixture
async def agents() -> AsyncIterator[list[DockerAgent]]:
    """Agents a test makes (closed, and checked for leftover probes, at the end)."""
    made: list[DockerAgent] = []
    yield made
    for agent in made:
        await agent.close()
        assert probes_left(agent.id) == []


def agent(made: list[DockerAgent], tmp_path: Path, **probe: object) -> DockerAgent:
    config = AgentConfig(
        id=f"gpu-{uuid.uuid4().hex[:8]}",
        data_root=str(tmp_path),
        gpu_probe=GpuProbe(**probe),  # type: ignore[arg-type]
    )
    made.append(DockerAgent(config))
    return made[-1]


async def test_gpus_are_detected_once_and_offered(
    fake_smi_images: None, agents: list[DockerAgent], tmp_path: Path
) -> None:
    gpu = agent(agents, tmp_path, mode="always", image=FAKE_SMI, runtime="runc")
    info = await gpu.info()
    assert info.reachable and info.gpu_note == ""
    assert info.gpu_ids == ("0", "1", "2") and info.capacity.gpu == 3
    assert [g.name for g in info.gpus] == ["NVIDIA H100 80GB HBM3"] * 3
    assert info.gpus[2].uuid == "GPU-0e4a5d1c-3333-4b7a-9a55-2f1c3b4d5e62"
    assert info.gpus[0].memory == 81559 << 20
    assert probes_left(gpu.id) == []
    for _ in range(3):  # the health probe does not run it again
        assert (await gpu.info()).gpu_ids == ("0", "1", "2")
    assert gpu.gpu_finder.probes == 1


async def test_a_configured_list_wins_over_detection(
    fake_smi_images: None, agents: list[DockerAgent], tmp_path: Path
) -> None:
    gpu = agent(agents, tmp_path, mode="always", image=FAKE_SMI, runtime="runc")
    pinned = DockerAgent(AgentConfig(id=gpu.id, gpus=("7",), gpu_probe=gpu.config.gpu_probe))
    agents.append(pinned)
    info = await pinned.info()
    assert info.gpu_ids == ("7",) and info.capacity.gpu == 1 and info.gpus == ()
    assert pinned.gpu_finder.probes == 0


async def test_an_engine_without_the_nvidia_runtime_is_not_probed(
    agents: list[DockerAgent], tmp_path: Path
) -> None:
    assert "nvidia" not in docker("info", "--format", "{{json .Runtimes}}").stdout
    plain = agent(agents, tmp_path)  # the default: auto
    info = await plain.info()
    assert info.reachable and info.gpu_ids == () and info.gpu_note == ""
    assert plain.gpu_finder.probes == 0


async def test_a_failing_probe_leaves_the_agent_available_with_a_note(
    agents: list[DockerAgent], tmp_path: Path
) -> None:
    no_runtime = agent(agents, tmp_path, mode="always", image=IMAGE)  # runtime nvidia
    info = await no_runtime.info()
    assert info.reachable and info.gpu_ids == () and info.capacity.gpu == 0
    assert info.gpu_note.startswith("GPU detection failed") and "nvidia" in info.gpu_note
    no_smi = agent(agents, tmp_path, mode="always", image=IMAGE, runtime="runc")
    info = await no_smi.info()
    assert info.reachable and info.gpu_ids == () and "GPU detection failed" in info.gpu_note
    absent = agent(agents, tmp_path, mode="always", image="jupyter-cluster/absent:0")
    info = await absent.info()
    assert info.reachable and "jupyter-cluster/absent:0 is not on agent" in info.gpu_note


async def test_a_hanging_nvidia_smi_is_cut_at_the_timeout_and_removed(
    fake_smi_images: None, agents: list[DockerAgent], tmp_path: Path
) -> None:
    slow = agent(agents, tmp_path, mode="always", image=HANGING_SMI, runtime="runc", timeout=3.0)
    info = await slow.info()
    assert info.reachable and info.gpu_ids == ()
    assert "did not answer within 3 s" in info.gpu_note
    assert probes_left(slow.id) == []
