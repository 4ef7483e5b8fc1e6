"""Per-owner limits (sessions, CPUs, memory, GPUs in all), checked by the store in the
transaction that inserts a session: every front end is counted, concurrent
launches from several processes cannot overshoot, and ended sessions free room."""

from __future__ import annotations

import multiprocessing
import uuid
from pathlib import Path
from typing import Any

import pytest
from traitlets.config import Config

from jupyter_cluster.core.models import LaunchSpec, Session
from jupyter_cluster.core.naming import DEFAULT_IMAGE, plan_containers
from jupyter_cluster.core.quota import Quota
from jupyter_cluster.core.state import SessionStatus
from jupyter_cluster.engine.agents.fake import FakeAgent
from jupyter_cluster.engine.manager import ClusterManager
from jupyter_cluster.engine.store.sessions import Store
from jupyter_cluster.errors import Conflict

GiB = 1024**3


def session(owner: str, size: int = 1, cpu: float = 1.0, mem: str = "1g", gpu: int = 0) -> Session:
    sid = str(uuid.uuid4())
    spec = LaunchSpec.create(image="img", size=size, cpu=cpu, mem=mem, gpu=gpu)
    return Session(id=sid, spec=spec, containers=plan_containers(sid, size), owner=owner)


def test_refusals_name_the_limit() -> None:
    held = [session("ada", size=2, cpu=1.5)]
    assert Quota().unlimited and Quota().refusal(held * 10, session("ada")) is None
    refusal = Quota(sessions=1).refusal(held, session("ada"))
    assert refusal and "ada already has 1 active" in refusal and "limit is 1" in refusal
    assert Quota(cpu=4).refusal(held, session("ada", cpu=1)) is None  # 3 + 1 = 4
    refusal = Quota(cpu=4).refusal(held, session("ada", cpu=1.5))
    assert refusal and "CPUs" in refusal and "limit of 4" in refusal
    refusal = Quota(mem=3 * GiB).refusal(held, session("ada", mem="2g"))
    assert refusal and "memory" in refusal and "3g" in refusal
    refusal = Quota(gpu=1).refusal([], session("ada", size=2, gpu=1))
    assert refusal and "GPUs" in refusal


def test_the_store_counts_only_the_owners_live_sessions(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.db")
    try:
        quota = Quota(sessions=2)
        first = session("ada")
        store.insert_session(first, quota)
        store.insert_session(session("bob"), quota)
        store.insert_session(session("ada"), quota)
        with pytest.raises(Conflict, match="limit is 2"):
            store.insert_session(session("ada"), quota)
        assert sum(s.owner == "ada" for s in store.list()) == 2  # nothing stored
        store.set_status(first.id, SessionStatus.CANCELLED)  # an ended session frees room
        store.insert_session(session("ada"), quota)
    finally:
        store.close()


def _insert_worker(path: str, barrier: Any, results: Any) -> None:
    store = Store(path)
    barrier.wait()
    try:
        store.insert_session(session("ada", cpu=2), Quota(sessions=3, cpu=4))
        results.put("stored")
    except Conflict:
        results.put("refused")
    finally:
        store.close()


def test_concurrent_launches_from_several_processes_cannot_overshoot(tmp_path: Path) -> None:
    path = str(tmp_path / "shared.db")
    Store(path).close()
    ctx = multiprocessing.get_context("spawn")
    barrier, results = ctx.Barrier(6), ctx.Queue()
    procs = [ctx.Process(target=_insert_worker, args=(path, barrier, results)) for _ in range(6)]
    for p in procs:
        p.start()
    outcomes = sorted(results.get(timeout=120) for _ in procs)
    for p in procs:
        p.join(timeout=60)
    assert outcomes == ["refused"] * 4 + ["stored"] * 2  # 2 x 2 CPUs reach the limit of 4
    check = Store(path)
    assert len(check.list()) == 2
    check.close()


def manager_with(tmp_path: Path, **traits: Any) -> ClusterManager:
    agent = FakeAgent("local", cpu=64, mem=256 * GiB, ready_on_start=True)
    return ClusterManager(
        db_path=str(tmp_path / "cluster.db"),
        data_root=str(tmp_path / "folders"),
        agent_factory=lambda config: agent,
        config=Config({"ClusterManager": traits}),
    )


async def test_the_managers_limits_hold_for_every_front_end(tmp_path: Path) -> None:
    manager = manager_with(tmp_path, max_cpu_per_owner=3.0, max_mem_per_owner="4g")
    spec = manager.make_spec(image=DEFAULT_IMAGE, size=2, cpu=1, mem="1g")
    first = await manager.submit(spec, owner="ada")
    with pytest.raises(Conflict, match=r"CPUs .* over the limit of 3"):
        await manager.submit(spec, owner="ada")
    other = await manager.submit(spec, owner="bob")  # limits are per owner
    small = manager.make_spec(image=DEFAULT_IMAGE, cpu=1, mem="3g")
    with pytest.raises(Conflict, match=r"memory .* over the limit of 4g"):
        await manager.submit(small, owner="ada")
    # a front end's own (tighter) session count applies together with them
    with pytest.raises(Conflict, match="limit is 1"):
        await manager.submit(
            manager.make_spec(image=DEFAULT_IMAGE, cpu=0.5),
            owner="ada",
            quota=manager.quota(sessions=1),
        )
    for s in (first, other):
        await manager.terminate(s.id)
    await manager.submit(spec, owner="ada")  # room again once ended
