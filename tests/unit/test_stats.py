"""Resource use from Docker's stats, read as ``docker stats`` reads it (#14 item 1)."""

from __future__ import annotations

from pathlib import Path

from traitlets.config import Config

from jupyter_cluster.core.naming import DEFAULT_IMAGE
from jupyter_cluster.core.stats import usage_from_docker
from jupyter_cluster.engine.agents.fake import FakeAgent
from jupyter_cluster.engine.manager import ClusterManager

#: One sample of Docker 20.10 (cgroup v1), trimmed: 25% of one of 2 CPUs busy.
SAMPLE = {
    "read": "2026-12-01T00:40:58.102306407Z",
    "cpu_stats": {
        "cpu_usage": {"total_usage": 1_250_000_000, "percpu_usage": [1, 2]},
        "system_cpu_usage": 10_000_000_000,
        "online_cpus": 2,
    },
    "precpu_stats": {"cpu_usage": {"total_usage": 0}, "system_cpu_usage": 0},
    "memory_stats": {
        "usage": 300 << 20,
        "limit": 1 << 30,
        "stats": {"total_inactive_file": 100 << 20, "cache": 150 << 20},
    },
    "networks": {"eth0": {"rx_bytes": 1000, "tx_bytes": 200}, "eth1": {"rx_bytes": 5}},
    "blkio_stats": {
        "io_service_bytes_recursive": [
            {"op": "Read", "value": 4096},
            {"op": "Write", "value": 8192},
            {"op": "Total", "value": 12288},
        ]
    },
    "pids_stats": {"current": 7},
}


def test_a_sample_reads_as_docker_stats_reads_it() -> None:
    u = usage_from_docker(SAMPLE)
    assert u.cpu_percent == 25.0  # 1.25 s of 10 s system time on 2 CPUs
    assert u.mem_used == 200 << 20  # without inactive file pages, as docker stats
    assert u.mem_limit == 1 << 30
    assert (u.net_rx, u.net_tx) == (1005, 200)
    assert (u.block_read, u.block_write) == (4096, 8192)
    assert u.pids == 7 and u.at == "2026-12-01T00:40:58Z"


def test_an_empty_or_first_sample_is_zero_not_an_error() -> None:
    u = usage_from_docker({})
    assert (u.cpu_percent, u.mem_used, u.net_rx, u.pids, u.at) == (0.0, 0, 0, 0, "")


async def test_the_manager_reads_every_running_container(tmp_path: Path) -> None:
    agent = FakeAgent("local", ready_on_start=True)
    manager = ClusterManager(
        db_path=str(tmp_path / "db"),
        data_root=str(tmp_path / "f"),
        agent_factory=lambda config: agent,
        config=Config(),
    )
    session = await manager.launch(manager.make_spec(image=DEFAULT_IMAGE, size=2, mem="512m"))
    sub1 = agent.by_host("sub1")
    sub1.cpu_percent, sub1.mem_used = 75.0, 100 << 20
    found = await manager.stats(session.id)
    assert set(found) == {"main1", "sub1"}
    assert found["sub1"] is not None and found["sub1"].cpu_percent == 75.0
    assert found["sub1"].mem_used == 100 << 20 and found["sub1"].mem_limit == 512 << 20
    agent.exit(sub1.id, 1)
    await manager.refresh()
    found = await manager.stats(session.id)
    assert found["sub1"] is None and found["main1"] is not None
    await manager.terminate(session.id)
