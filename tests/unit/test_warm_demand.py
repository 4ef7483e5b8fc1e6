"""The adaptive warm pool (fake agent): it keeps sets of the shapes launched lately,
within its bounds, and removes them when their shape is no longer launched."""

from __future__ import annotations

from pathlib import Path

from jupyter_cluster.core.naming import DEFAULT_IMAGE
from jupyter_cluster.core.resources import Resources
from jupyter_cluster.core.warm import WarmShape, WarmTarget, recent_targets
from jupyter_cluster.engine.agents.fake import FakeAgent
from jupyter_cluster.engine.upkeep import WarmRefill
from jupyter_cluster.engine.warm_demand import WarmDemand, demand_targets
from tests.unit.fake_engine import fake_manager

from .test_warm_pool import GIB, warm_boxes


def shape(cpu: float) -> WarmShape:
    return WarmShape(DEFAULT_IMAGE, Resources(cpu=cpu, mem=GIB), 1)


def test_recent_shapes_most_recent_first_within_the_window_and_bounds() -> None:
    launches = [(100.0, shape(1), "default"), (90.0, shape(2), "default")]
    launches += [(95.0, shape(1), "default"), (10.0, shape(3), "default")]
    got = recent_targets(launches, now=100.0, window=60.0, per_shape=2, max_sets=3)
    assert got == [WarmTarget(shape(1), 2, "default"), WarmTarget(shape(2), 1, "default")]
    configured = [WarmTarget(shape(1), 1)]  # kept anyway: not counted twice
    got = recent_targets(launches, 100.0, 60.0, 1, 4, configured)
    assert got == [WarmTarget(shape(2), 1, "default")]
    assert recent_targets(launches, 100.0, 60.0, 0, 4) == []


async def test_a_shape_launched_lately_is_kept_warm_then_let_go(tmp_path: Path) -> None:
    agent = FakeAgent("local", ready_on_start=True, cpu=16.0)
    manager = fake_manager(tmp_path, agent, warm_pool_adaptive=True, warm_pool_max_sets=2)
    jobs = manager.upkeep(lambda: None)
    assert manager.warm.enabled and any(isinstance(j, WarmRefill) for j in jobs)
    assert await manager.warm.fill() == 0  # nothing launched yet
    spec = manager.make_spec(size=2, cpu=1, mem="1g")
    first = await manager.launch(spec)
    assert first.network == ""  # cold: its shape was not known
    assert await manager.warm.fill() == 1
    second = await manager.launch(spec)
    assert second.network.startswith("jc-warm-")
    # Three shapes launched: the bound keeps sets of the two most recent.
    for cpu in (2, 0.5):
        await manager.launch(manager.make_spec(size=1, cpu=cpu, mem="1g"))
    assert await manager.warm.fill() == 2
    kept = {w.shape_key for w in manager.warm.table.ready()}
    assert kept == {shape(2).key, shape(0.5).key}
    # No launch within the window: the sets are removed, none made.
    manager.warm_pool_window = 0.0
    assert await manager.warm.fill() == 0
    assert manager.warm.table.ready() == []
    for s in await manager.list():
        await manager.terminate(s.id)
    await manager.warm.drain()
    assert warm_boxes(agent) == [] and manager.warm.table.known() == (set(), set())


async def test_a_shape_launched_and_ended_is_still_kept_warm(tmp_path: Path) -> None:
    """The usual loop: start a kernel, shut it down, start it again."""
    agent = FakeAgent("local", ready_on_start=True, cpu=8.0)
    manager = fake_manager(tmp_path, agent, warm_pool_adaptive=True)
    spec = manager.make_spec(size=2, cpu=1, mem="1g")
    first = await manager.launch(spec)
    await manager.terminate(first.id)
    assert await manager.warm.fill() == 1
    again = await manager.launch(spec)
    assert again.network.startswith("jc-warm-")
    manager.warm_pool_window = 0.0  # launched too long ago: let go
    await manager.terminate(again.id)
    assert await manager.warm.fill() == 0 and manager.warm.table.ready() == []
    await manager.warm.drain()
    assert warm_boxes(agent) == []


async def test_a_process_without_the_pool_configured_takes_the_servers_sets(
    tmp_path: Path,
) -> None:
    """A kernel provisioner's manager may not name the pool the server keeps."""
    agent = FakeAgent("local", ready_on_start=True, cpu=8.0)
    server = fake_manager(tmp_path, agent, warm_pool=[{"cpu": 1, "mem": "1g"}])
    other = fake_manager(tmp_path, agent)
    assert not other.warm.enabled
    assert await server.warm.fill() == 1
    session = await other.launch(other.make_spec(size=1, cpu=1, mem="1g"))
    assert session.network.startswith("jc-warm-")
    await other.terminate(session.id)
    await server.warm.drain()
    assert warm_boxes(agent) == []


async def test_the_store_answers_the_latest_placed_launch_of_each_spec(tmp_path: Path) -> None:
    """What the adaptive pool reads at each refill, instead of every session of its
    window: one row per spec and owner, the latest, ended ones too, placed ones only."""
    agent = FakeAgent("local", ready_on_start=True, cpu=2.0)
    manager = fake_manager(tmp_path, agent)
    half = manager.make_spec(size=1, cpu=0.5, mem="1g")
    first = await manager.launch(half)
    await manager.terminate(first.id)
    again = await manager.launch(half)  # the same spec: only the latest counts
    named = await manager.launch(manager.make_spec(size=1, cpu=1, mem="1g", name="n"))
    waiting = await manager.submit(manager.make_spec(size=1, cpu=2, mem="1g"))  # no room
    assert (await manager.get(waiting.id)).containers[0].agent is None
    got = sorted(
        (at, spec.resources.cpu, spec.name, who)
        for at, spec, who in manager.store.recent_launches(0.0)
    )
    assert got == [(again.created_at, 0.5, None, ""), (named.created_at, 1.0, "n", "")]
    later = manager.store.recent_launches(named.created_at)
    assert [(at, spec.name) for at, spec, _ in later] == [(named.created_at, "n")]
    # The pool's targets from them: the most recent shape first.
    recent = manager.store.recent_launches(0.0)
    targets = demand_targets(WarmDemand(on=True, max_sets=4), recent, [])
    assert [t.shape.key for t in targets] == [shape(1).key, shape(0.5).key]
    for session in (again, named, waiting):
        await manager.terminate(session.id)
    await manager.close()
