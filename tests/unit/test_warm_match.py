"""Which warm set a launch may take when sets are made for data folders or GPUs (fake
agent): folders resolve per owner and are matched exactly, a folder made again under
its name is not the one a set holds, and GPU sets hold the ids the scheduler gives."""

from __future__ import annotations

import shutil
from pathlib import Path

from jupyter_cluster.core.naming import DEFAULT_IMAGE
from jupyter_cluster.core.resources import Mount, Resources
from jupyter_cluster.core.warm import WarmSet, WarmShape, pick_gpus
from jupyter_cluster.core.warm_room import to_evict
from jupyter_cluster.engine.agents.fake import FakeAgent
from jupyter_cluster.engine.manager import ClusterManager
from jupyter_cluster.engine.warm_make import make_set

from .test_warm_pool import GIB, warm_boxes

GPU_SHAPE = WarmShape(DEFAULT_IMAGE, Resources(cpu=1.0, mem=GIB, gpu=1), 2)


def manager_for(
    tmp_path: Path, agent: FakeAgent, target: dict[str, object], **traits: object
) -> ClusterManager:
    return ClusterManager(
        **traits,
        db_path=str(tmp_path / "cluster.db"),
        data_root=str(tmp_path / "folders"),
        agent_factory=lambda config: agent,
        warm_pool=[{"cpu": 1, "mem": "1g", **target}],
    )


# -- pure decisions -----------------------------------------------------------------


def test_gpu_sets_hold_the_lowest_free_ids_the_scheduler_would_give() -> None:
    assert pick_gpus(["g0", "g1", "g2"], frozenset({"g0"}), GPU_SHAPE) == (("g1",), ("g2",))
    assert pick_gpus(["g0", "g1"], frozenset({"g0"}), GPU_SHAPE) is None  # two needed
    plain = WarmShape(DEFAULT_IMAGE, Resources(cpu=1.0, mem=GIB), 2)
    assert pick_gpus([], frozenset(), plain) == ()


def test_a_set_holding_a_gpu_a_session_was_given_gives_way() -> None:
    held = WarmSet("s0", "a", GPU_SHAPE.key, GPU_SHAPE.total, gpu_ids=(("g0",), ("g1",)))
    free = WarmSet("s1", "a", GPU_SHAPE.key, GPU_SHAPE.total, gpu_ids=(("g2",), ("g3",)))
    capacity = Resources(cpu=16.0, mem=64 * GIB, gpu=4)
    used = Resources(cpu=1.0, mem=GIB, gpu=1)
    evicted = to_evict(capacity, used, [held, free], GPU_SHAPE.key, frozenset({"g1"}))
    assert evicted == [held]
    # By count alone too: four GPUs, one used, four in sets.
    assert to_evict(capacity, used, [held, free], GPU_SHAPE.key) == [held]


# -- the engine, with a fake agent ------------------------------------------------


async def test_a_folder_set_serves_only_its_owner_and_the_same_folders(tmp_path: Path) -> None:
    agent = FakeAgent("local", ready_on_start=True, cpu=8.0)
    manager = manager_for(
        tmp_path, agent, {"owner": "alice", "mounts": ["data"]}, folders_per_owner=True
    )
    for owner in ("alice", "bob"):
        await manager.create_folder("data", owner=owner)
    assert await manager.warm.fill() == 1
    (ready,) = manager.warm.table.ready()
    made = manager.warm.table.containers_of(ready.set_id)
    box = agent.containers[next(iter(made))]
    (mount,) = box.spec.mounts
    assert mount.target.endswith("/data") and "alice" in mount.source
    spec = manager.make_spec(size=1, cpu=1, mem="1g", mounts=[Mount("data")])
    # bob's folder of the same name is another folder: his session launches cold.
    bobs = await manager.launch(spec, owner="bob")
    assert bobs.network == "" and not {c.container_id for c in bobs.containers} & made
    (bob_mount,) = agent.containers[bobs.containers[0].container_id or ""].spec.mounts
    assert "bob" in bob_mount.source
    # Other folders, or none, are other shapes.
    plain = await manager.launch(manager.make_spec(size=1, cpu=1, mem="1g"), owner="alice")
    assert plain.network == ""
    alices = await manager.launch(spec, owner="alice")
    assert {c.container_id for c in alices.containers} == made
    assert alices.network.startswith("jc-warm-")
    for s in (bobs, plain, alices):
        await manager.terminate(s.id)
    await manager.warm.drain()
    assert warm_boxes(agent) == [] and manager.warm.table.known() == (set(), set())


async def test_a_folder_made_again_under_its_name_is_not_the_sets(tmp_path: Path) -> None:
    agent = FakeAgent("local", ready_on_start=True, cpu=8.0)
    manager = manager_for(tmp_path, agent, {"mounts": ["data:ro"], "count": 1})
    folder = await manager.create_folder("data")
    assert await manager.warm.fill() == 1
    made = manager.warm.table.containers_of(manager.warm.table.ready()[0].set_id)
    shutil.rmtree(folder.path)
    await manager.create_folder("data")
    spec = manager.make_spec(size=1, cpu=1, mem="1g", mounts=[Mount("data", readonly=True)])
    session = await manager.launch(spec)
    assert session.network == "" and not {c.container_id for c in session.containers} & made
    # The next refill removes the stale set and makes one of the new folder.
    assert await manager.warm.fill() == 1
    assert made.isdisjoint(warm_boxes(agent))
    again = await manager.launch(spec)
    assert again.network.startswith("jc-warm-")
    for s in (session, again):
        await manager.terminate(s.id)
    await manager.warm.drain()
    assert warm_boxes(agent) == []


async def test_gpu_sets_are_taken_with_the_ids_the_session_is_given(tmp_path: Path) -> None:
    agent = FakeAgent("local", ready_on_start=True, cpu=8.0, gpus=("g0", "g1", "g2"))
    manager = manager_for(tmp_path, agent, {"gpu": 1, "size": 1, "count": 3})
    assert await manager.warm.fill() == 3
    held = sorted(w.gpu_ids for w in manager.warm.table.ready())
    assert held == [(("g0",),), (("g1",),), (("g2",),)]
    spec = manager.make_spec(size=1, cpu=1, mem="1g", gpu=1)
    first = await manager.launch(spec)
    second = await manager.launch(spec)
    for session, gpu in ((first, "g0"), (second, "g1")):
        assert session.network.startswith("jc-warm-")
        (container,) = session.containers
        assert container.gpu_ids == (gpu,)
        assert agent.containers[container.container_id or ""].spec.gpu_ids == (gpu,)
    (left,) = manager.warm.table.ready()
    assert left.gpu_ids == (("g2",),)
    # A session of another shape is given the set's GPU: the set gives way.
    cold = await manager.launch(manager.make_spec(size=1, cpu=2, mem="1g", gpu=1))
    assert cold.network == "" and cold.containers[0].gpu_ids == ("g2",)
    assert manager.warm.table.ready() == []
    for session in (first, second, cold):
        await manager.terminate(session.id)
    await manager.warm.drain()
    assert warm_boxes(agent) == [] and manager.warm.table.known() == (set(), set())


async def test_the_scheduler_prefers_an_agent_with_a_set_of_the_shape(tmp_path: Path) -> None:
    fakes = {
        "roomy": FakeAgent("roomy", ready_on_start=True, cpu=16.0),
        "warm": FakeAgent("warm", ready_on_start=True, cpu=4.0),
    }
    manager = ClusterManager(
        db_path=str(tmp_path / "cluster.db"),
        data_root=str(tmp_path / "folders"),
        agents=[{"id": "roomy"}, {"id": "warm"}],
        agent_factory=lambda config: fakes[config.id],
        warm_pool=[{"cpu": 1, "mem": "1g", "size": 2}],
    )
    # A set on the smaller agent only (as if the roomy one had just been added).
    await make_set(manager.warm, ("warm", "warm"), manager.warm.targets[0].shape, ())
    spec = manager.make_spec(size=2, cpu=1, mem="1g")
    taken = await manager.launch(spec)
    assert {c.agent for c in taken.containers} == {"warm"}
    assert taken.network.startswith("jc-warm-")
    # No set left: the roomiest agent again.
    cold = await manager.launch(spec)
    assert {c.agent for c in cold.containers} == {"roomy"} and cold.network == ""
    for s in (taken, cold):
        await manager.terminate(s.id)
    await manager.warm.drain()
    assert all(warm_boxes(agent) == [] for agent in fakes.values())
