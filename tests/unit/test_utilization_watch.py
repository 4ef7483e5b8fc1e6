"""The engine's utilization idle clean-up with a fake agent (#26 item 4): sessions from
any front end are sampled, a quiet one is warned (status reason), then ended with an
``idle:`` reason recorded in the audit log; CPU use, a running exec, what a server
knows of its kernels, a busy GPU, an owner's own timeout and a running batch command
keep one."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import pytest

from jupyter_cluster.core.idle import Activity
from jupyter_cluster.core.models import Session
from jupyter_cluster.core.naming import DEFAULT_IMAGE
from jupyter_cluster.core.state import SessionStatus
from jupyter_cluster.core.stats import NVIDIA_SMI
from jupyter_cluster.engine.agents.fake import ExecCall, FakeAgent, FakeContainer
from jupyter_cluster.engine.manager import ClusterManager
from jupyter_cluster.engine.store.audit_log import AuditLog
from jupyter_cluster.engine.store.drivers import this_process
from jupyter_cluster.engine.utilization_idle import UtilizationWatch
from tests.unit.fake_engine import fake_manager

T0 = 1796108020.0  # 2026-12-01T06:53:40Z


@pytest.fixture
async def manager(tmp_path: Path) -> AsyncIterator[ClusterManager]:
    """A manager on one fake agent: 10 min to the warning, 60 s to the end."""
    agent = FakeAgent("a1", ready_on_start=True)
    found = fake_manager(
        tmp_path,
        agent,
        agents=[{"id": "a1"}],
        utilization_idle_timeout=600,
        utilization_idle_grace=60,
        idle_cpu_threshold=5,
    )
    found.test_agent = agent  # type: ignore[attr-defined]
    yield found
    for session in await found.list():
        await found.terminate(session.id)
    await found.close()


async def launch(manager: ClusterManager, owner: str = "", **fields: object) -> Session:
    spec = manager.make_spec(image=DEFAULT_IMAGE, cpu=0.25, mem="64m", **fields)
    return await manager.launch(spec, owner=owner)


def set_cpu(manager: ClusterManager, session: Session, percent: float) -> None:
    agent: FakeAgent = manager.test_agent  # type: ignore[attr-defined]
    agent.containers[session.locate("main1").container_id or ""].cpu_percent = percent


async def passes(watch: UtilizationWatch, *times: float) -> list[str]:
    ended: list[str] = []
    for at in times:
        ended += await watch.check(now=T0 + at)
    return ended


async def test_a_quiet_session_is_warned_then_ended_and_audited(manager: ClusterManager) -> None:
    session = await launch(manager, owner="ann")
    busy = await launch(manager, owner="ann")
    set_cpu(manager, busy, 40.0)
    watch = manager.utilization
    assert watch in manager.upkeep(lambda: None)
    assert await passes(watch, 0, 300) == []
    assert await passes(watch, 600) == []
    warned = manager.store.require(session.id)
    assert warned.status is SessionStatus.RUNNING
    assert warned.status_reason == (
        "idle: CPU below 5% for 10m; terminates in 1m (at 07:04:40 UTC) unless used"
    )
    assert manager.store.require(busy.id).status_reason == ""
    assert await passes(watch, 659) == []
    assert await passes(watch, 660) == [session.id]
    ended = manager.store.require(session.id)
    assert ended.status is SessionStatus.TERMINATED
    assert ended.status_reason == "idle: CPU below 5% for 11m, terminated"
    assert manager.store.require(busy.id).status is SessionStatus.RUNNING
    (record,) = AuditLog(manager.store.tx).read(action="terminate")
    assert (record.session_id, record.target_owner, record.actor) == (session.id, "ann", "server")
    assert record.details == {"reason": ended.status_reason}


async def test_use_after_the_warning_takes_it_away(manager: ClusterManager) -> None:
    session = await launch(manager)
    watch = manager.utilization
    await passes(watch, 0, 600)
    assert manager.store.require(session.id).status_reason.startswith("idle: ")
    set_cpu(manager, session, 30.0)
    await passes(watch, 630)
    assert manager.store.require(session.id).status_reason == ""
    set_cpu(manager, session, 0.0)
    assert await passes(watch, 700, 1299) == []
    assert manager.store.require(session.id).status_reason == ""


async def test_a_running_exec_and_a_servers_busy_kernel_keep_a_session(
    manager: ClusterManager,
) -> None:
    by_exec = await launch(manager)
    by_kernel = await launch(manager)
    exec_id = manager.exec_log.began(by_exec.id, this_process())  # e.g. the CLI's exec
    manager.utilization.sources.append(lambda _: {by_kernel.id: Activity(T0, kernel_busy=True)})
    assert await passes(manager.utilization, 0, 600, 660, 10_000) == []
    assert manager.store.require(by_exec.id).status_reason == ""
    assert manager.store.require(by_kernel.id).status_reason == ""
    manager.exec_log.ended(exec_id)  # now quiet: its idle time starts with the exec's end
    assert await passes(manager.utilization, 10_030) == []
    assert manager.store.require(by_exec.id).status is SessionStatus.RUNNING


async def test_a_failing_activity_source_keeps_sessions(manager: ClusterManager) -> None:
    session = await launch(manager)

    def broken(sessions: Sequence[Session]) -> dict[str, Activity]:
        raise RuntimeError("kernel manager gone")

    manager.utilization.sources.append(broken)
    assert await passes(manager.utilization, 0, 600, 660) == []
    assert manager.store.require(session.id).status_reason == ""


async def test_an_owners_own_timeout_applies_and_batch_sessions_are_exempt(
    manager: ClusterManager,
) -> None:
    manager.utilization_idle_timeout_for = lambda owner: {"bob": 0, "cy": 60}.get(owner)
    bob = await launch(manager, owner="bob")  # never
    cy = await launch(manager, owner="cy")  # 60 s
    batch = await launch(manager, owner="cy", command="sleep 600")  # its job has no result
    assert await passes(manager.utilization, 0, 60) == []
    assert manager.store.require(cy.id).status_reason.startswith("idle: CPU below 5% for 1m;")
    assert await passes(manager.utilization, 120, 10_000) == [cy.id]
    assert manager.store.require(bob.id).status is SessionStatus.RUNNING
    assert manager.store.require(batch.id).status is SessionStatus.RUNNING
    assert manager.store.require(batch.id).status_reason == ""


async def test_nothing_is_sampled_while_off(manager: ClusterManager) -> None:
    manager.utilization_idle_timeout = 0
    assert not manager.utilization.enabled
    session = await launch(manager)
    agent: FakeAgent = manager.test_agent  # type: ignore[attr-defined]
    before = len([c for c in agent.calls if c[0] == "stats"])
    assert await passes(manager.utilization, 0, 10_000) == []
    assert len([c for c in agent.calls if c[0] == "stats"]) == before
    assert manager.store.require(session.id).status_reason == ""


async def test_a_busy_gpu_keeps_a_session_with_a_quiet_cpu(tmp_path: Path) -> None:
    agent = FakeAgent("local", ready_on_start=True, gpus=("0", "1"))
    util = {"now": "80"}

    def nvidia_smi(box: FakeContainer, call: ExecCall) -> tuple[int, bytes]:
        assert call.cmd == NVIDIA_SMI
        return 0, f"0, {util['now']}, 1024, 16384\n".encode()

    agent.exec_handler = nvidia_smi
    manager = ClusterManager(
        db_path=str(tmp_path / "cluster.db"),
        data_root=str(tmp_path / "folders"),
        agent_factory=lambda config: agent,
        utilization_idle_timeout=600,
        idle_gpu_threshold=10,
    )
    session = await manager.launch(manager.make_spec(image=DEFAULT_IMAGE, gpu=1, mem="64m"))
    try:
        assert await passes(manager.utilization, 0, 600, 660) == []
        assert manager.store.require(session.id).status_reason == ""
        util["now"] = "3"  # the GPU is quiet now too
        assert await passes(manager.utilization, 700, 1300) == []
        assert manager.store.require(session.id).status_reason.startswith(
            "idle: CPU below 5% and GPU below 10% for 10m;"
        )
        assert await passes(manager.utilization, 1360) == [session.id]
    finally:
        await manager.close()


async def test_an_owners_policy_is_looked_up_once_per_session_and_pass(
    manager: ClusterManager,
) -> None:
    """A policy's timeout may read the site's limits: one lookup per session a pass."""
    asked: list[str] = []

    def timeout_for(owner: str) -> float | None:
        asked.append(owner)
        return 60 if owner == "cy" else None

    manager.utilization_idle_timeout_for = timeout_for
    await launch(manager, owner="bob")
    cy = await launch(manager, owner="cy")
    assert await passes(manager.utilization, 0) == []
    assert sorted(asked) == ["bob", "cy"]
    assert await passes(manager.utilization, 60) == []
    assert sorted(asked) == ["bob", "bob", "cy", "cy"]
    reason = manager.store.require(cy.id).status_reason
    assert reason.startswith("idle: CPU below 5% for 1m;")  # its own 60 s applied
