"""The warm pool's decisions (pure core) and bookkeeping (engine, fake agent): what it
makes, what a launch may take, what gives way, and that a failed or ended launch
leaves none of its containers behind."""

from __future__ import annotations

from pathlib import Path

import pytest

from jupyter_cluster.core.models import LaunchSpec, Session
from jupyter_cluster.core.naming import DEFAULT_IMAGE, LABEL_WARM, plan_containers
from jupyter_cluster.core.resources import Mount, Resources
from jupyter_cluster.core.state import SessionStatus
from jupyter_cluster.core.warm import (
    WarmSet,
    WarmShape,
    WarmTarget,
    layout_of,
    parse_targets,
    shape_of,
)
from jupyter_cluster.core.warm_room import refill_plan, to_evict
from jupyter_cluster.engine.agents.fake import FakeAgent
from jupyter_cluster.engine.manager import ClusterManager
from jupyter_cluster.errors import InvalidRequest, LaunchFailed
from tests.unit.fake_engine import fake_manager

GIB = 1024**3
SMALL = Resources(cpu=1.0, mem=GIB)
SHAPE = WarmShape(DEFAULT_IMAGE, SMALL, 2)


def warm_set(agent: str, shape: WarmShape = SHAPE, n: int = 0) -> WarmSet:
    return WarmSet(f"{agent}-{n}", agent, shape.key, shape.total)


# -- pure decisions -----------------------------------------------------------------


def test_targets_are_validated_with_the_entry_named() -> None:
    (target,) = parse_targets([{"cpu": 1, "mem": "1g", "size": 3}], DEFAULT_IMAGE, 16)
    assert target.shape.hosts == ("main1", "sub1", "sub2")
    assert target.shape.total == Resources(cpu=3.0, mem=3 * GIB, shm=3 * 64 * 1024**2)
    with pytest.raises(InvalidRequest, match=r"warm_pool\[0\]: unknown key 'gpus'"):
        parse_targets([{"gpus": 1}], DEFAULT_IMAGE, 16)
    with pytest.raises(InvalidRequest, match=r"warm_pool\[0\]: mounts: '\.\./x'"):
        parse_targets([{"mounts": ["../x"]}], DEFAULT_IMAGE, 16)
    with pytest.raises(InvalidRequest, match=r"warm_pool\[0\]: workdir must be"):
        parse_targets([{"workdir": "lab"}], DEFAULT_IMAGE, 16)
    with pytest.raises(InvalidRequest, match=r"warm_pool\[1\]: size must be 1 to 16"):
        parse_targets([{}, {"size": 17}], DEFAULT_IMAGE, 16)
    with pytest.raises(InvalidRequest, match="count must be"):
        parse_targets([{"count": -1}], DEFAULT_IMAGE, 16)
    with pytest.raises(InvalidRequest, match=r"warm_pool\[0\]: .*cpu"):
        parse_targets([{"cpu": "lots"}], DEFAULT_IMAGE, 16)
    with pytest.raises(InvalidRequest, match=r"warm_pool\[0\]: image: 'Py' is no image reference"):
        parse_targets([{"image": "Py"}], DEFAULT_IMAGE, 16)


def test_refill_makes_count_sets_within_free_capacity() -> None:
    target = WarmTarget(SHAPE, count=3)
    agents = {"a": ("default", Resources(cpu=5.0, mem=8 * GIB))}
    # 5 CPUs, 2 held by a set already: room for one more set of 2 CPUs, not two.
    assert refill_plan([target], agents, {}, [warm_set("a")], frozenset()) == [("a", SHAPE)]
    used = {"a": Resources(cpu=2.0, mem=GIB)}
    assert refill_plan([target], agents, used, [warm_set("a")], frozenset()) == []


def test_refill_waits_while_a_session_of_the_group_waits_and_respects_groups() -> None:
    agents = {
        "a": ("default", Resources(cpu=4.0, mem=8 * GIB)),
        "g": ("gpu", Resources(cpu=4.0, mem=8 * GIB)),
    }
    target = WarmTarget(SHAPE, resource_group="default")
    assert refill_plan([target], agents, {}, [], frozenset({"default"})) == []
    assert refill_plan([target], agents, {}, [], frozenset({"gpu"})) == [("a", SHAPE)]


def test_eviction_frees_room_other_shapes_first() -> None:
    other = WarmShape(DEFAULT_IMAGE, Resources(cpu=1.0, mem=2 * GIB), 1)
    warm = [warm_set("a"), warm_set("a", other, 1)]
    capacity = Resources(cpu=5.0, mem=8 * GIB)
    assert to_evict(capacity, Resources(cpu=2.0, mem=GIB), warm) == []
    evicted = to_evict(capacity, Resources(cpu=3.0, mem=GIB), warm, SHAPE.key)
    assert [e.shape_key for e in evicted] == [other.key]
    assert len(to_evict(capacity, Resources(cpu=4.0, mem=GIB), warm, SHAPE.key)) == 2


def test_a_placed_sessions_shape_names_its_owner_with_folders_and_its_layout() -> None:
    def session(
        resources: Resources = SMALL, agents: tuple[str, ...] = ("a", "a"), **spec: object
    ) -> Session:
        launch = LaunchSpec(image=DEFAULT_IMAGE, resources=resources, size=2, **spec)  # type: ignore[arg-type]
        planned = plan_containers("s", 2)
        placed = tuple(c.with_(agent=a) for c, a in zip(planned, agents, strict=True))
        return Session(id="s", spec=launch, containers=placed)

    assert shape_of(session()) == SHAPE
    folders = shape_of(session(mounts=(Mount("data"),)))
    assert folders is not None and folders.mounts == (Mount("data"),)
    assert folders.key != SHAPE.key and "mounts=data:rw" in folders.key
    gpu = shape_of(session(Resources(1.0, GIB, gpu=1)))
    assert gpu is not None and gpu.key.endswith("|gpu=1")
    spread = session(agents=("a", "b"))
    assert shape_of(spread) == SHAPE and layout_of(spread) == ("a", "b")
    unplaced = spread.with_(containers=plan_containers("s", 2))
    assert shape_of(unplaced) is None


# -- the engine, with a fake agent ------------------------------------------------


def manager_for(tmp_path: Path, agent: FakeAgent, **traits: object) -> ClusterManager:
    return fake_manager(tmp_path, agent, warm_pool=[{"cpu": 1, "mem": "1g", "size": 2}], **traits)


def warm_boxes(agent: FakeAgent) -> list[str]:
    return [
        box.id
        for box in agent.containers.values()
        if LABEL_WARM in box.spec.labels and box.status != "removed"
    ]


async def test_a_set_is_taken_once_and_the_pool_refills(tmp_path: Path) -> None:
    agent = FakeAgent("local", ready_on_start=True, cpu=8.0)
    manager = manager_for(tmp_path, agent)
    assert await manager.warm.fill() == 1
    (ready,) = manager.warm.table.ready()
    warm = manager.warm.table.containers_of(ready.set_id)
    spec = manager.make_spec(size=2, cpu=1, mem="1g")
    session = await manager.launch(spec)
    assert {c.container_id for c in session.containers} == warm
    assert session.network.startswith("jc-warm-")
    box = agent.containers[session.containers[1].container_id or ""]
    assert box.spec.network == session.network and box.spec.aliases == ("sub1",)
    assert "BACKENDAI_SESSION_ID=" in box.files["/opt/jupyter-cluster/env"].content.decode()
    assert not [c for c in agent.calls if c[0] == "create_network" and c[1] == session.network][1:]
    # Its containers exist already: each gets its copy, no volume of start-up files.
    assert not [c for c in agent.calls if c[0] == "create_volume"]
    # A set is taken by exactly one launch: a second one of the same shape goes cold.
    other = await manager.launch(spec)
    assert not {c.container_id for c in other.containers} & warm and other.network == ""
    assert await manager.warm.fill() == 1
    await manager.refresh()  # the reconciler leaves both the pool and the taken set be
    assert (await manager.get(session.id)).status is SessionStatus.RUNNING
    assert len(warm_boxes(agent)) == 4
    await manager.warm.drain()
    assert len(warm_boxes(agent)) == 2  # the taken ones belong to their session
    for s in (session, other):
        await manager.terminate(s.id)
    assert warm_boxes(agent) == [] and manager.warm.table.known() == (set(), set())
    assert not agent.networks


async def test_a_failed_launch_removes_the_warm_set_it_took(tmp_path: Path) -> None:
    agent = FakeAgent("local", ready_on_start=True)
    manager = manager_for(tmp_path, agent)
    await manager.warm.fill()
    agent.fail_on["put_files:sub1"] = RuntimeError("disk on fire")
    with pytest.raises(LaunchFailed, match="disk on fire"):
        await manager.launch(manager.make_spec(size=2, cpu=1, mem="1g"))
    assert warm_boxes(agent) == [] and not agent.networks
    await manager.warm.sweep()
    assert manager.warm.table.known() == (set(), set())


async def test_a_set_taken_by_a_launch_that_never_recorded_it_is_swept(tmp_path: Path) -> None:
    """A launching process that died between taking and recording: the sweep removes it."""
    agent = FakeAgent("local", ready_on_start=True)
    manager = manager_for(tmp_path, agent)
    await manager.warm.fill()
    session = await manager.submit(manager.make_spec(size=2, cpu=1, mem="1g"))
    taken = manager.warm.take(await manager.get(session.id))
    assert len(taken) == 2
    await manager.warm.sweep()  # still launching: kept
    assert set(warm_boxes(agent)) == set(taken.values()) and agent.networks
    manager.store.set_status(session.id, SessionStatus.ERROR, "its driver died")
    await manager.warm.sweep()
    await manager.warm.sweep()  # the network goes once its containers are gone
    assert warm_boxes(agent) == [] and manager.warm.table.known() == (set(), set())
    assert not agent.networks


async def test_a_spread_session_launches_cold_beside_the_pool(tmp_path: Path) -> None:
    agent = FakeAgent("local", ready_on_start=True, cpu=8.0)
    manager = manager_for(tmp_path, agent)
    await manager.warm.fill()
    session = await manager.launch(manager.make_spec(size=1, cpu=1, mem="1g"))
    assert session.network == "" and len(manager.warm.table.ready()) == 1


def test_the_pool_and_the_prestarted_interpreter_agree_on_their_lines() -> None:
    """runtime/prestart.py runs in containers without this package: its constants are
    copies, kept equal here."""
    from jupyter_cluster.core import kernel_command, naming
    from jupyter_cluster.engine import warm_pool
    from jupyter_cluster.runtime import prestart

    assert prestart.READY == warm_pool.PRESTART_READY
    assert prestart.NOT_READY == warm_pool.PRESTART_NOT_READY
    assert prestart.RUN == naming.PRESTART_DIR
    assert prestart.PARENT_ENV == kernel_command.PARENT_ENV
