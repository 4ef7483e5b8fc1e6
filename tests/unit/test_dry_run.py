"""A dry run of a launch (``ClusterManager.check``, the launcher's ``preview``) with the
fake agent: it says where a launch would start, or why and where in the queue it
would wait, in the words the launch itself then meets; it refuses what the launch
would refuse; and it makes and stores nothing.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from jupyter_cluster.core.launch_check import LaunchCheck
from jupyter_cluster.core.models import LaunchSpec
from jupyter_cluster.core.state import SessionStatus
from jupyter_cluster.engine.agents.fake import DEFAULT_IMAGE, FakeAgent
from jupyter_cluster.errors import Conflict, InvalidRequest, NotFound

from .engine_parts import build, manager_over


def spec(**fields: object) -> LaunchSpec:
    return LaunchSpec.create(image=DEFAULT_IMAGE, **fields)  # type: ignore[arg-type]


async def test_a_launch_that_fits_would_start_now_and_nothing_is_made(tmp_path: Path) -> None:
    agent = FakeAgent("local", cpu=4.0)
    parts = build(tmp_path, agent)
    found = await parts.launcher.preview(spec(size=3), owner="ada")
    assert found == LaunchCheck.placed(["local"] * 3)
    assert found.to_dict() == {
        "starts_now": True,
        "placement": {"main1": "local", "sub1": "local", "sub2": "local"},
        "reason": "",
    }
    assert found.describe() == "would start now on local: main1, sub1, sub2"
    assert parts.store.list(include_ended=True) == []
    assert not agent.containers and not agent.networks
    assert all(m in ("info", "has_image") for m, _ in agent.calls), agent.calls
    parts.close()


async def test_a_launch_without_room_would_wait_with_the_reason_the_launch_then_gets(
    tmp_path: Path,
) -> None:
    agent = FakeAgent("local", cpu=1.0, ready_on_start=True)
    parts = build(tmp_path, agent)
    await parts.launcher.launch(spec(cpu=1), owner="ada")
    found = await parts.launcher.preview(spec(cpu=1), owner="ada")
    assert not found.starts_now and found.placement == ()
    waiting = await parts.launcher.submit(spec(cpu=1), owner="ada")
    assert waiting.status is SessionStatus.PENDING
    assert found.reason == waiting.status_reason, (found.reason, waiting.status_reason)
    assert found.reason.startswith("1st in the queue of resource group default")
    assert found.describe() == f"would wait (PENDING): {found.reason}"
    parts.close()


async def test_behind_waiting_sessions_it_names_only_the_owners_own(tmp_path: Path) -> None:
    agent = FakeAgent("local", cpu=1.0, ready_on_start=True)
    parts = build(tmp_path, agent)
    await parts.launcher.launch(spec(cpu=1), owner="ada")
    await parts.launcher.submit(spec(cpu=1, name="adas-next"), owner="ada")
    mine = await parts.launcher.preview(spec(cpu=1), owner="ada")
    assert mine.reason.startswith("2nd in the queue"), mine.reason
    assert "waiting behind 1 earlier session(s) (next: adas-next)" in mine.reason
    theirs = await parts.launcher.preview(spec(cpu=1), owner="bob")
    assert "adas-next" not in theirs.reason
    assert "(next: another user's session)" in theirs.reason, theirs.reason
    assert len(parts.store.list()) == 2  # the dry runs stored nothing
    parts.close()


async def test_a_higher_priority_comes_first_in_a_priority_queue(tmp_path: Path) -> None:
    agent = FakeAgent("local", cpu=1.0, ready_on_start=True)
    manager = manager_over(tmp_path, {"local": agent}, queue_order="priority")
    try:
        await manager.launch(spec(cpu=1), owner="ada")
        await manager.submit(spec(cpu=1, priority=1), owner="ada")
        low = await manager.check(spec(cpu=1, priority=0), owner="bob")
        assert low.reason.startswith("2nd in the queue of resource group default (priority)")
        high = await manager.check(spec(cpu=1, priority=5), owner="bob")
        assert high.reason.startswith("1st in the queue of resource group default (priority): ")
    finally:
        await manager.close()


async def test_in_a_fair_share_queue_who_holds_least_comes_first(tmp_path: Path) -> None:
    agent = FakeAgent("local", cpu=1.0, ready_on_start=True)
    manager = manager_over(tmp_path, {"local": agent}, queue_order="fair-share")
    try:
        await manager.launch(spec(cpu=1), owner="ada")  # ada holds the whole agent
        await manager.submit(spec(cpu=1, name="adas-next"), owner="ada")
        bobs = await manager.check(spec(cpu=1), owner="bob")  # holds nothing: first
        assert bobs.reason.startswith("1st in the queue of resource group default (fair share): ")
        adas = await manager.check(spec(cpu=1), owner="ada")
        assert adas.reason.startswith("2nd in the queue"), adas.reason
        assert "(next: adas-next)" in adas.reason
    finally:
        await manager.close()


async def test_with_backfill_a_small_launch_would_start_past_a_big_one(tmp_path: Path) -> None:
    agent = FakeAgent("local", cpu=2.0, ready_on_start=True)
    parts = build(tmp_path, agent, pending_backfill=True)
    await parts.launcher.launch(spec(cpu=1), owner="ada")
    await parts.launcher.submit(spec(cpu=2), owner="ada")  # waits for the whole agent
    assert (await parts.launcher.preview(spec(cpu=1), owner="bob")).starts_now
    parts.launcher.settings.pending_backfill = False
    behind = await parts.launcher.preview(spec(cpu=1), owner="bob")
    assert not behind.starts_now and behind.reason.startswith("2nd in the queue"), behind
    parts.close()


async def test_what_the_launch_would_refuse_the_dry_run_refuses(tmp_path: Path) -> None:
    agent = FakeAgent("local", cpu=2.0, ready_on_start=True)
    parts = build(tmp_path, agent, max_size=4, max_sessions_per_owner=1)
    with pytest.raises(InvalidRequest, match="size"):
        await parts.launcher.preview(spec(size=5))
    with pytest.raises(NotFound, match="no data folder"):
        await parts.launcher.preview(spec(mounts=["missing"]))
    with pytest.raises(InvalidRequest, match=r"(?i)cpu"):
        await parts.launcher.preview(spec(cpu=3))  # no agent could ever hold it
    await parts.launcher.launch(spec(name="train"), owner="ada")
    with pytest.raises(Conflict, match="a session named train is already active"):
        await parts.launcher.preview(spec(name="train"), owner="ada")
    with pytest.raises(Conflict, match="limit is 1"):
        await parts.launcher.preview(spec(), owner="ada")
    # Neither ada's count nor her names are bob's.
    assert (await parts.launcher.preview(spec(name="train"), owner="bob")).starts_now
    assert len(parts.store.list()) == 1
    parts.close()


async def test_the_manager_spreads_a_multi_node_launch_as_the_scheduler_would(
    tmp_path: Path,
) -> None:
    agents = {
        "a1": FakeAgent("a1", cpu=2.0),
        "a2": FakeAgent("a2", cpu=1.0),
    }
    manager = manager_over(tmp_path, agents)
    try:
        found = await manager.check(spec(size=3, mode="multi-node"), owner="ada")
        assert dict(found.placement) == {"main1": "a1", "sub1": "a1", "sub2": "a2"}
        assert found.describe() == "would start now on a1: main1, sub1; a2: sub2"
        with pytest.raises(InvalidRequest, match="use multi-node mode"):
            await manager.check(spec(size=3), owner="ada")  # single-node: never
        assert manager.store.list(include_ended=True) == []
    finally:
        await manager.close()


def test_a_check_reads_back_from_its_json() -> None:
    found = LaunchCheck.placed(["a1", "a1", "a2"])
    assert LaunchCheck.from_dict(found.to_dict()) == found
    waiting = LaunchCheck.waiting("1st in the queue of resource group default")
    assert LaunchCheck.from_dict(waiting.to_dict()) == waiting
    with pytest.raises(ValueError, match="placement"):
        LaunchCheck.from_dict({"placement": ["main1"]})
