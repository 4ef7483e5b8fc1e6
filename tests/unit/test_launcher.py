"""SessionLauncher alone, with a store and the fake agent (no ClusterManager, no Docker).

It refuses what can never run before storing anything, counts the owner's quota,
queues what does not fit now, brings a placed session up to RUNNING with its keys,
reads its settings at each launch, and a failed or cancelled launch leaves nothing.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from jupyter_cluster.core.models import LaunchSpec
from jupyter_cluster.core.quota import Quota
from jupyter_cluster.core.state import LAUNCH_INTERRUPTED, ContainerStatus, SessionStatus
from jupyter_cluster.engine.agents.fake import DEFAULT_IMAGE, FakeAgent
from jupyter_cluster.errors import Conflict, InvalidRequest, LaunchFailed, NotFound

from .engine_parts import build


def spec(**fields: object) -> LaunchSpec:
    return LaunchSpec.create(image=DEFAULT_IMAGE, **fields)  # type: ignore[arg-type]


async def test_a_launch_runs_every_container_with_the_sessions_keys(tmp_path: Path) -> None:
    agent = FakeAgent("local", ready_on_start=True)
    parts = build(tmp_path, agent)
    seen: list[SessionStatus] = []
    session = await parts.launcher.launch(
        spec(size=3), owner="ada", on_change=lambda s: seen.append(s.status)
    )
    assert session.status is SessionStatus.RUNNING and session.owner == "ada"
    assert [c.status for c in session.containers] == [ContainerStatus.RUNNING] * 3
    assert sorted(agent.containers) == sorted(c.container_id for c in session.containers)
    assert seen[0] is SessionStatus.PREPARING and seen[-1] is SessionStatus.RUNNING
    keys = parts.store.load_keys(session.id)
    assert keys is not None and "user" in keys
    assert parts.store.driver(session.id) is None  # nobody drives a running session
    parts.close()


async def test_what_can_never_run_is_refused_before_anything_is_stored(tmp_path: Path) -> None:
    agent = FakeAgent("local", cpu=2.0)
    parts = build(tmp_path, agent, max_size=4)
    with pytest.raises(InvalidRequest, match="size"):
        await parts.launcher.submit(spec(size=5))
    with pytest.raises(NotFound, match="no data folder"):
        await parts.launcher.submit(spec(mounts=["missing"]))
    with pytest.raises(InvalidRequest):
        await parts.launcher.submit(spec(cpu=3))  # no agent could ever hold it
    assert parts.store.list(include_ended=True) == []
    assert not agent.calls or all(m in ("info", "has_image") for m, _ in agent.calls)
    parts.close()


async def test_the_settings_are_read_at_each_launch(tmp_path: Path) -> None:
    agent = FakeAgent("local", ready_on_start=True)
    parts = build(tmp_path, agent, max_size=1)
    with pytest.raises(InvalidRequest):
        await parts.launcher.submit(spec(size=2))
    parts.launcher.settings.max_size = 2
    assert (await parts.launcher.submit(spec(size=2))).status is SessionStatus.PREPARING
    parts.close()


async def test_the_owners_quota_is_counted_when_the_session_is_stored(tmp_path: Path) -> None:
    agent = FakeAgent("local")
    parts = build(tmp_path, agent, max_sessions_per_owner=1)
    assert parts.launcher.quota() == Quota(sessions=1)
    assert parts.launcher.quota(sessions=3).sessions == 1  # the tighter limit holds
    await parts.launcher.submit(spec(), owner="ada")
    with pytest.raises(Conflict):
        await parts.launcher.submit(spec(), owner="ada")
    await parts.launcher.submit(spec(), owner="bob")  # others are not counted
    parts.close()


async def test_a_session_waits_for_room_and_starts_when_it_is_freed(tmp_path: Path) -> None:
    agent = FakeAgent("local", cpu=1.0, ready_on_start=True)
    parts = build(tmp_path, agent, pending_poll_interval=0.05)
    first = await parts.launcher.launch(spec(cpu=1))
    second = await parts.launcher.submit(spec(cpu=1))
    assert second.status is SessionStatus.PENDING and second.status_reason
    driving = asyncio.ensure_future(parts.launcher.drive(second.id))
    await asyncio.sleep(0.2)
    assert not driving.done()
    await parts.terminator.terminate(first.id)
    running = await asyncio.wait_for(driving, 5)
    assert running.status is SessionStatus.RUNNING
    parts.close()


async def test_a_waiting_session_is_cancelled_after_the_pending_timeout(tmp_path: Path) -> None:
    agent = FakeAgent("local", cpu=1.0, ready_on_start=True)
    parts = build(tmp_path, agent, pending_poll_interval=0.05, pending_timeout=0.2)
    await parts.launcher.launch(spec(cpu=1))
    waiting = await parts.launcher.submit(spec(cpu=1))
    ended = await parts.launcher.drive(waiting.id)
    assert ended.status is SessionStatus.CANCELLED
    assert "pending_timeout" in ended.status_reason
    parts.close()


@pytest.mark.parametrize(
    ("failing", "phases"),
    [
        # sub1 starts once both are created and filled: every phase before it ran.
        ("sub1", {"network", "create", "files"}),
        ("main1", {"network"}),
    ],
)
async def test_a_failed_launch_ends_in_error_with_nothing_left(
    tmp_path: Path, failing: str, phases: set[str]
) -> None:
    agent = FakeAgent("local", ready_on_start=True)
    parts = build(tmp_path, agent)
    agent.fail_on[f"start_container:{failing}"] = RuntimeError("no such device")
    session = await parts.launcher.submit(spec(size=2))
    with pytest.raises(LaunchFailed, match="no such device"):
        await parts.launcher.drive(session.id)
    failed = parts.store.require(session.id)
    assert failed.status is SessionStatus.ERROR and "no such device" in failed.status_reason
    assert [c.status for c in failed.containers] == [ContainerStatus.TERMINATED] * 2
    assert parts.store.load_keys(session.id) is None
    assert not agent.networks and not agent.containers
    assert phases <= set(failed.timings), failed.timings
    parts.close()


async def test_cancelling_the_driver_abandons_the_launch(tmp_path: Path) -> None:
    agent = FakeAgent("local", cpu=1.0, ready_on_start=True)
    parts = build(tmp_path, agent, pending_poll_interval=0.05)
    await parts.launcher.launch(spec(cpu=1))
    waiting = await parts.launcher.submit(spec(cpu=1))
    driving = asyncio.ensure_future(parts.launcher.drive(waiting.id))
    await asyncio.sleep(0.1)
    driving.cancel()
    with pytest.raises(asyncio.CancelledError):
        await driving
    assert parts.store.require(waiting.id).status is SessionStatus.CANCELLED
    parts.close()


async def test_a_launch_cancelled_while_preparing_keeps_its_logs_and_says_why(
    tmp_path: Path,
) -> None:
    """Ctrl-C on a launch whose containers never get ready (a bootstrap that hangs):
    everything is removed, the history says the launch was interrupted (not a bare
    "terminated"), and each container's log is kept for ``logs`` to show why."""
    agent = FakeAgent("local")  # started, never ready
    parts = build(tmp_path, agent)
    waiting = await parts.launcher.submit(spec(size=2))
    driving = asyncio.ensure_future(parts.launcher.drive(waiting.id))
    while len([b for b in agent.containers.values() if b.status == "running"]) < 2:
        await asyncio.sleep(0.01)
    for container_id in agent.containers:
        agent.emit(container_id, "pip: collecting torch")
    driving.cancel()
    with pytest.raises(asyncio.CancelledError):
        await driving
    ended = parts.store.require(waiting.id)
    assert (ended.status, ended.status_reason) == (SessionStatus.TERMINATED, LAUNCH_INTERRUPTED)
    assert not agent.containers and not agent.networks
    assert parts.store.load_keys(waiting.id) is None
    for host in ("main1", "sub1"):
        assert list(parts.archive.lines(waiting.id, host)) == ["pip: collecting torch\n"]
    parts.close()
