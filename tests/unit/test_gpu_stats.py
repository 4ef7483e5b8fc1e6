"""GPU figures in stats (#14 item 1) without a GPU: nvidia-smi's output parsed in the
pure core, and the manager's stats with a fake agent whose exec answers as nvidia-smi
would (or as a container without it does)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from traitlets.config import Config

from jupyter_cluster.cli.format import usage_table
from jupyter_cluster.core.naming import DEFAULT_IMAGE
from jupyter_cluster.core.stats import NVIDIA_SMI, GpuUsage, Usage, gpu_reading, parse_nvidia_smi
from jupyter_cluster.engine.agents.fake import ExecCall, FakeAgent, FakeContainer
from jupyter_cluster.engine.gpu_stats import read_gpus
from jupyter_cluster.engine.manager import ClusterManager
from jupyter_cluster.errors import AgentError

MIB = 1 << 20
TWO_GPUS = "0, 35, 1024, 16384\n1, 100, 16000, 16384\n"


def test_several_gpus_are_read_with_memory_in_bytes() -> None:
    gpus, note = gpu_reading(0, TWO_GPUS)
    assert note == ""
    assert gpus == (
        GpuUsage("0", 35.0, 1024 * MIB, 16384 * MIB),
        GpuUsage("1", 100.0, 16000 * MIB, 16384 * MIB),
    )


def test_odd_output_keeps_what_it_can_and_says_what_it_could_not() -> None:
    text = "0, [N/A], 10, 40536\r\n\n  \ngarbage\n1, 5, [N/A], 40536\n2,7,3,4,5\n"
    gpus, bad = parse_nvidia_smi(text)
    assert gpus == (GpuUsage("0", None, 10 * MIB, 40536 * MIB),)  # MIG: no utilization
    assert bad == ["garbage", "1, 5, [N/A], 40536", "2,7,3,4,5"]
    found, note = gpu_reading(0, text)
    assert found == gpus and "3 line(s) not understood" in note and "garbage" in note
    assert parse_nvidia_smi("0, nan, -1, 8\n") == ((), ["0, nan, -1, 8"])


def test_no_nvidia_smi_or_no_gpu_gives_no_figures_and_a_note() -> None:
    missing = 'OCI runtime exec failed: exec: "nvidia-smi": executable file not found in $PATH'
    for code, out in ((127, "sh: nvidia-smi: not found"), (126, missing), (1, missing)):
        assert gpu_reading(code, out) == (
            (),
            "no GPU figures: nvidia-smi is not available in the container",
        )
    gpus, note = gpu_reading(9, "", "NVIDIA-SMI has failed because it couldn't communicate")
    assert gpus == () and note.startswith("no GPU figures: nvidia-smi failed (exit code 9)")
    assert gpu_reading(0, "") == ((), "no GPU figures: nvidia-smi listed no GPU")


def test_gpu_fields_appear_only_for_a_container_given_gpus() -> None:
    plain = Usage(1.0, 2, 3, 4, 5, 6, 7, 8, "t")
    assert "gpus" not in plain.to_dict() and "gpu_note" not in plain.to_dict()
    assert Usage.from_dict(plain.to_dict()) == plain
    with_gpus = plain.with_gpus(gpu_reading(0, TWO_GPUS)[0], "")
    data = with_gpus.to_dict()
    assert data["gpus"][1] == {
        "index": "1",
        "util_percent": 100.0,
        "mem_used": 16000 * MIB,
        "mem_total": 16384 * MIB,
    }
    assert Usage.from_dict(data) == with_gpus  # what the shared service's client reads
    table = usage_table({"main1": with_gpus, "sub1": None}).splitlines()
    assert table[0].split()[-1] == "TOTAL" and "GPU:" in table[0]
    assert "0: 35% 1g / 16g, 1: 100% 15.62g / 16g" in table[1]
    assert "GPU" not in usage_table({"main1": plain})


def gpu_manager(tmp_path: Path, agent: FakeAgent) -> ClusterManager:
    return ClusterManager(
        db_path=str(tmp_path / "db"),
        data_root=str(tmp_path / "f"),
        agent_factory=lambda config: agent,
        config=Config(),
    )


async def test_stats_read_nvidia_smi_in_containers_given_gpus(tmp_path: Path) -> None:
    agent = FakeAgent("local", ready_on_start=True, gpus=("0", "1", "2", "3"))

    def nvidia_smi(box: FakeContainer, call: ExecCall) -> tuple[int, bytes]:
        assert call.cmd == NVIDIA_SMI
        if box.spec.hostname == "sub1":
            return 127, b"sh: 1: nvidia-smi: not found\n"
        return 0, TWO_GPUS.encode()

    agent.exec_handler = nvidia_smi
    manager = gpu_manager(tmp_path, agent)
    session = await manager.launch(manager.make_spec(image=DEFAULT_IMAGE, size=2, gpu=2))
    assert all(len(c.gpu_ids) == 2 for c in session.containers)
    found = await manager.stats(session.id)
    main1, sub1 = found["main1"], found["sub1"]
    assert main1 is not None and sub1 is not None
    assert [g.util_percent for g in main1.gpus] == [35.0, 100.0] and main1.gpu_note == ""
    assert sub1.gpus == () and "not available" in sub1.gpu_note
    assert sub1.cpu_percent == 0.0 and sub1.mem_limit > 0  # the other figures stay
    table = usage_table(found).splitlines()
    assert "GPU:" in table[0] and table[-1].startswith("sub1: no GPU figures")
    # reading stats is not use of the session (the idle clean-up ignores it)
    assert manager.exec_log.activity(session.id) == (None, [])
    await manager.terminate(session.id)


async def test_a_container_without_gpus_runs_no_nvidia_smi(tmp_path: Path) -> None:
    agent = FakeAgent("local", ready_on_start=True, gpus=("0",))
    manager = gpu_manager(tmp_path, agent)
    session = await manager.launch(manager.make_spec(image=DEFAULT_IMAGE, size=2))
    found = await manager.stats(session.id)
    assert all(u is not None and "gpus" not in u.to_dict() for u in found.values())
    assert agent.execs == []
    await manager.terminate(session.id)


class SlowAgent(FakeAgent):
    """An agent whose exec never answers (a hung nvidia-smi) or fails."""

    error: AgentError | None = None

    async def exec(self, container_id: str, cmd: object, **kw: object) -> int:  # type: ignore[override]
        if self.error is not None:
            raise self.error
        await asyncio.sleep(3600)
        return 0


async def test_a_hung_or_failing_nvidia_smi_costs_only_the_gpu_figures() -> None:
    agent = SlowAgent("local")
    assert await read_gpus(agent, "c1", timeout=0.05) == (
        (),
        "no GPU figures: nvidia-smi did not answer within 0.05 s",
    )
    agent.error = AgentError("agent local: container c1 is not running")
    gpus, note = await read_gpus(agent, "c1")
    assert gpus == () and note.endswith("could not run: agent local: container c1 is not running")
