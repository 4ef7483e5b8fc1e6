"""Warm sets spread over agents: where the pool makes them (pure), how the scheduler
places a multi-node session onto one, and the engine's bookkeeping with fake agents
(overlay through a Swarm manager, taking, eviction, the sweep, nothing left)."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

from jupyter_cluster.core.models import ClusterMode, LaunchSpec
from jupyter_cluster.core.naming import DEFAULT_IMAGE
from jupyter_cluster.core.resources import Mount, Resources
from jupyter_cluster.core.scheduler import AgentSlot, Placement, place
from jupyter_cluster.core.state import SessionStatus
from jupyter_cluster.core.warm import WarmSet, WarmShape, WarmTarget, spec_place_key
from jupyter_cluster.core.warm_room import to_evict
from jupyter_cluster.core.warm_spread import spread_plan
from jupyter_cluster.engine.agents.fake import FakeAgent
from jupyter_cluster.engine.manager import ClusterManager

from .test_warm_pool import GIB, warm_boxes

ONE = Resources(cpu=1.0, mem=GIB)
THREE = WarmShape(DEFAULT_IMAGE, ONE, 3)


def agents_of(**cpus: float) -> dict[str, tuple[str, Resources]]:
    return {a: ("default", Resources(cpu=c, mem=16 * GIB)) for a, c in cpus.items()}


def spread_set(layout: tuple[str, ...], shape: WarmShape = THREE) -> WarmSet:
    return WarmSet("s", layout[0], shape.key, shape.total, layout=layout)


# -- pure decisions -----------------------------------------------------------------


def test_a_shape_no_agent_holds_is_spread_roomiest_first_within_free_room() -> None:
    agents = agents_of(a=2, b=2, c=1)
    swarm = {"a": "S", "b": "S", "c": "S"}
    plan = spread_plan([WarmTarget(THREE, count=2)], agents, swarm, {}, [], frozenset())
    # The second set would need 3 of the 2 CPUs left (b: 1, c: 1): only one is made.
    assert plan == [(("a", "a", "b"), THREE)]
    # Sets already there count, by their share of each agent.
    held = [spread_set(("a", "a", "b"))]
    assert spread_plan([WarmTarget(THREE, count=2)], agents, swarm, {}, held, frozenset()) == []
    # A shape one agent can hold is refill_plan's; a group with a waiting session none.
    two = WarmShape(DEFAULT_IMAGE, ONE, 2)
    assert spread_plan([WarmTarget(two)], agents, swarm, {}, [], frozenset()) == []
    assert spread_plan([WarmTarget(THREE)], agents, swarm, {}, [], frozenset({"default"})) == []


def test_a_spread_set_stays_within_one_swarm() -> None:
    agents = agents_of(a=2, b=2, c=2)
    apart = {"a": "S", "b": "T", "c": ""}
    assert spread_plan([WarmTarget(THREE)], agents, apart, {}, [], frozenset()) == []
    used = {"a": Resources(cpu=1.0, mem=GIB)}
    together = {"a": "S", "b": "T", "c": "T"}
    got = spread_plan([WarmTarget(THREE)], agents, together, used, [], frozenset())
    assert got == [(("b", "b", "c"), THREE)]


def test_a_spread_set_holds_its_share_of_each_agent_and_goes_whole() -> None:
    held = spread_set(("a", "a", "b"))
    assert held.held_on("a").cpu == 2.0 and held.held_on("b").cpu == 1.0
    assert held.held_on("c") == Resources(0, 0, 0, 0) and held.agents == {"a", "b"}
    two_cpus = Resources(cpu=2.0, mem=16 * GIB)
    # b has 2 CPUs; a session takes 1.5 of them: the set's one CPU there must go.
    used = Resources(cpu=1.5, mem=GIB)
    assert to_evict(two_cpus, used, [held], agent_id="b") == [held]
    assert to_evict(two_cpus, Resources(cpu=1.0, mem=GIB), [held], agent_id="b") == []


def test_the_scheduler_places_a_multi_node_session_as_a_ready_set_lies() -> None:
    spec = LaunchSpec(image=DEFAULT_IMAGE, resources=ONE, size=4, mode=ClusterMode.MULTI_NODE)
    layout = ("a", "a", "b", "b")
    slots = [
        AgentSlot("a", "default", Resources(2.0, 16 * GIB, 0, 0), swarm="S"),
        AgentSlot("b", "default", Resources(3.0, 16 * GIB, 0, 0), swarm="S"),
    ]
    cold = place(spec, slots)
    assert isinstance(cold, Placement) and cold.agents == ("b", "b", "b", "a")
    ready = frozenset({(spec_place_key(spec), layout)})
    warm = [replace(slots[0], warm_layouts=ready), slots[1]]
    got = place(spec, warm)
    assert isinstance(got, Placement) and got.agents == layout
    # An agent of the set has no room now: placed as usual (the launch goes cold).
    busy = [replace(warm[0], used=ONE), slots[1]]
    got = place(spec, busy)
    assert isinstance(got, Placement) and got.agents == ("b", "b", "b", "a")


# -- the engine, with fake agents -------------------------------------------------------


def spread_manager(
    tmp_path: Path, gpus: tuple[str, ...] = (), **traits: object
) -> tuple[ClusterManager, dict[str, FakeAgent]]:
    """A Swarm manager with no room and two workers (each with ``gpus``); a warm
    target only both hold (unless ``traits`` say otherwise)."""
    fakes = {
        "m": FakeAgent("m", cpu=0.5, ready_on_start=True),
        "w1": FakeAgent("w1", cpu=2, gpus=gpus, ready_on_start=True),
        "w2": FakeAgent("w2", cpu=2, gpus=gpus, ready_on_start=True),
    }
    fakes["w1"].swarm_worker = fakes["w2"].swarm_worker = True
    manager = ClusterManager(
        db_path=str(tmp_path / "cluster.db"),
        data_root=str(tmp_path / "folders"),
        agents=[{"id": name} for name in fakes],
        agent_factory=lambda config: fakes[config.id],
        **{"warm_pool": [{"cpu": 1, "mem": "1g", "size": 3}], **traits},  # type: ignore[arg-type]
    )
    return manager, fakes


def boxes(fakes: dict[str, FakeAgent]) -> dict[str, int]:
    return {name: len(warm_boxes(agent)) for name, agent in fakes.items()}


async def test_a_multi_node_launch_takes_a_set_spread_over_workers(tmp_path: Path) -> None:
    manager, fakes = spread_manager(tmp_path)
    assert await manager.warm.fill() == 1
    (ready,) = manager.warm.table.ready()
    assert ready.layout == ("w1", "w1", "w2") and boxes(fakes) == {"m": 0, "w1": 2, "w2": 1}
    # The overlay is made through the manager, as a cold session's is.
    assert [n.driver for n in fakes["m"].networks.values()] == ["overlay"]
    made = manager.warm.table.containers_of(ready.set_id)
    spec = manager.make_spec(size=3, cpu=1, mem="1g", mode="multi-node")
    session = await manager.launch(spec)
    assert session.status is SessionStatus.RUNNING
    assert {c.container_id for c in session.containers} == made
    assert tuple(c.agent for c in session.containers) == ready.layout
    assert session.network in {n.name for n in fakes["m"].networks.values()}
    await manager.warm.sweep()  # the taken set is the session's now, not the pool's
    assert manager.warm.table.known() == (set(), set())
    await manager.terminate(session.id)
    assert boxes(fakes) == {"m": 0, "w1": 0, "w2": 0}
    assert not any(agent.networks for agent in fakes.values())
    await manager.close()


async def test_a_session_needing_a_workers_room_removes_the_whole_spread_set(
    tmp_path: Path,
) -> None:
    manager, fakes = spread_manager(tmp_path)
    await manager.warm.fill()
    session = await manager.launch(manager.make_spec(size=2, cpu=1, mem="1g"))
    assert {c.agent for c in session.containers} == {"w1"}
    assert manager.warm.table.ready() == []
    assert boxes(fakes) == {"m": 0, "w1": 0, "w2": 0} and not fakes["m"].networks
    await manager.terminate(session.id)
    await manager.close()


async def test_the_sweep_keeps_a_spread_set_whole_and_removes_a_broken_one(
    tmp_path: Path,
) -> None:
    manager, fakes = spread_manager(tmp_path)
    await manager.warm.fill()
    (ready,) = manager.warm.table.ready()
    await manager.warm.sweep()  # each agent sees only its own part: all there
    assert manager.warm.table.ready() == [ready]
    (lost,) = manager.warm.table.containers_of(ready.set_id, "w2")
    await fakes["w2"].remove_container(lost)  # removed behind the pool's back
    await manager.warm.sweep()
    assert manager.warm.table.ready() == [] and boxes(fakes) == {"m": 0, "w1": 0, "w2": 0}
    assert not fakes["m"].networks
    await manager.close()


async def test_the_adaptive_pool_keeps_a_spread_shape_launched_lately(tmp_path: Path) -> None:
    manager, fakes = spread_manager(tmp_path, warm_pool=[], warm_pool_adaptive=True)
    spec = manager.make_spec(size=3, cpu=1, mem="1g", mode="multi-node")
    cold = await manager.launch(spec)
    assert cold.network == "" and len({c.agent for c in cold.containers}) == 2
    await manager.terminate(cold.id)
    assert await manager.warm.fill() == 1
    (ready,) = manager.warm.table.ready()
    assert ready.spread
    made = manager.warm.table.containers_of(ready.set_id)
    warm = await manager.launch(spec)
    assert {c.container_id for c in warm.containers} == made
    await manager.terminate(warm.id)
    await manager.warm.drain()
    assert boxes(fakes) == {"m": 0, "w1": 0, "w2": 0} and not fakes["m"].networks
    await manager.close()


async def test_a_spread_folder_set_checks_the_folders_on_every_agent(tmp_path: Path) -> None:
    """A folder made again on the second agent only still makes the set stale."""
    target = {"cpu": 1, "mem": "1g", "size": 3, "mounts": ["data"]}
    manager, fakes = spread_manager(tmp_path, warm_pool=[target])
    other_root = tmp_path / "w2-folders"
    fakes["w2"].config = replace(fakes["w2"].config, data_root=str(other_root))
    await manager.create_folder("data")
    (other_root / "data").mkdir(parents=True)
    assert await manager.warm.fill() == 1
    (ready,) = manager.warm.table.ready()
    made = manager.warm.table.containers_of(ready.set_id)
    (on_w2,) = manager.warm.table.containers_of(ready.set_id, "w2")
    assert [m.source for m in fakes["w2"].containers[on_w2].spec.mounts] == [
        str(other_root / "data")
    ]
    shutil.rmtree(other_root / "data")
    (other_root / "data").mkdir()
    spec = manager.make_spec(size=3, cpu=1, mem="1g", mode="multi-node", mounts=[Mount("data")])
    cold = await manager.launch(spec)
    assert cold.network == "" and not {c.container_id for c in cold.containers} & made
    await manager.terminate(cold.id)
    assert await manager.warm.fill() == 1  # the stale set removed, a new one made
    assert made.isdisjoint(c for agent in fakes.values() for c in warm_boxes(agent))
    again = await manager.launch(spec)
    assert again.network.startswith("jc-warm-")
    await manager.terminate(again.id)
    await manager.warm.drain()
    assert boxes(fakes) == {"m": 0, "w1": 0, "w2": 0}
    await manager.close()


async def test_a_spread_gpu_set_holds_on_each_agent_the_ids_the_scheduler_gives(
    tmp_path: Path,
) -> None:
    target = {"cpu": 1, "mem": "1g", "size": 3, "gpu": 1}
    manager, fakes = spread_manager(tmp_path, gpus=("0", "1"), warm_pool=[target])
    assert await manager.warm.fill() == 1
    (ready,) = manager.warm.table.ready()
    # GPU ids are per agent: "0" on w1 and "0" on w2 are two GPUs.
    assert ready.layout == ("w1", "w1", "w2") and ready.gpu_ids == (("0",), ("1",), ("0",))
    assert ready.gpus_on("w1") == {"0", "1"} and ready.gpus_on("w2") == {"0"}
    made = manager.warm.table.containers_of(ready.set_id)
    spec = manager.make_spec(size=3, cpu=1, mem="1g", gpu=1, mode="multi-node")
    session = await manager.launch(spec)
    assert {c.container_id for c in session.containers} == made
    assert [c.gpu_ids for c in session.containers] == [("0",), ("1",), ("0",)]
    await manager.terminate(session.id)
    await manager.warm.drain()
    assert boxes(fakes) == {"m": 0, "w1": 0, "w2": 0} and not fakes["m"].networks
    await manager.close()
