"""Tests of the SQLite store: sessions, resolution, transitions, keys, placement.

No Docker: a database in tmp_path. The concurrency tests start real OS processes
(multiprocessing, spawn) that share one database file.
"""

from __future__ import annotations

import multiprocessing
import os
import sqlite3
import stat
import subprocess
import sys
import uuid
from typing import Any

import pytest

from jupyter_cluster.core.models import Session
from jupyter_cluster.core.resources import Resources
from jupyter_cluster.core.scheduler import AgentSlot, Pending, Placement
from jupyter_cluster.core.state import ContainerStatus, SessionStatus
from jupyter_cluster.engine.store.drivers import Driver
from jupyter_cluster.engine.store.sessions import Store
from jupyter_cluster.errors import ClusterError, Conflict, InvalidRequest, NotFound

from .support import new_session, place_worker

GiB = 1024**3
S = SessionStatus


def agent(
    aid: str = "a1", cpu: float = 4, mem: int = 64 * GiB, gpus: tuple[str, ...] = ()
) -> AgentSlot:
    return AgentSlot(
        id=aid,
        resource_group="default",
        capacity=Resources(cpu, mem, 0, 0),
        gpu_ids=gpus,
        swarm="swarm",
    )


@pytest.fixture
def store(tmp_path: Any) -> Any:
    s = Store(str(tmp_path / "db" / "store.sqlite"))
    yield s
    s.close()


def add(store: Store, *args: Any, **kwargs: Any) -> Session:
    session = new_session(*args, **kwargs)
    store.insert_session(session)
    got = store.get(session.id)
    assert got is not None
    return got


def end(store: Store, sid: str) -> None:
    for status in (S.PREPARING, S.RUNNING, S.TERMINATING, S.TERMINATED):
        if store.get(sid).status is not status:  # type: ignore[union-attr]
            store.set_status(sid, status)


# -- sessions ------------------------------------------------------------------------


def test_insert_get_round_trip(store: Store) -> None:
    session = new_session(size=3, cpu=0.5, name="train", mode="multi-node")
    store.insert_session(session)
    got = store.get(session.id)
    assert got is not None
    assert got.id == session.id and got.spec == session.spec
    assert got.containers == session.containers
    assert got.hosts == ["main1", "sub1", "sub2"]
    assert got.status is S.PENDING
    assert got.created_at > 0 and got.updated_at >= got.created_at and got.ended_at is None
    assert store.get("nope") is None


def test_duplicate_id_conflicts(store: Store) -> None:
    session = add(store)
    with pytest.raises(Conflict):
        store.insert_session(session)


def test_list_order_and_ended(store: Store) -> None:
    a = add(store, created_at=100.0)
    b = add(store, created_at=50.0)
    c = add(store, created_at=200.0)
    store.set_status(b.id, S.CANCELLED)
    assert [s.id for s in store.list()] == [a.id, c.id]
    assert [s.id for s in store.list(include_ended=True)] == [b.id, a.id, c.id]
    store.set_status(c.id, S.ERROR)  # ERROR is still listed (it may need cleaning up)
    assert [s.id for s in store.list()] == [a.id, c.id]


def test_resolve_by_id_name_and_prefix(store: Store) -> None:
    a = add(store, sid="abcd1111-0000-0000-0000-000000000000", name="alpha")
    b = add(store, sid="abcd2222-0000-0000-0000-000000000000")
    assert store.resolve(a.id).id == a.id
    assert store.resolve("alpha").id == a.id
    assert store.resolve("abcd1").id == a.id
    assert store.resolve("abcd2222").id == b.id
    with pytest.raises(InvalidRequest) as ambiguous:
        store.resolve("abcd")
    assert a.id in str(ambiguous.value) and b.id in str(ambiguous.value)
    with pytest.raises(NotFound) as missing:
        store.resolve("zzzz")
    assert "no session matches 'zzzz'" in str(missing.value)
    assert "jupyter cluster ls --all" in str(missing.value)
    with pytest.raises(NotFound):
        store.resolve("abc")  # a prefix needs 4 characters


def test_resolve_name_prefers_newest_active(store: Store) -> None:
    old = add(store, name="job", created_at=1.0)
    store.set_status(old.id, S.CANCELLED)
    active = add(store, name="job", created_at=2.0)
    store.set_status(active.id, S.ERROR)  # frees the name but stays active
    newest = add(store, name="job", created_at=3.0)
    store.set_status(newest.id, S.CANCELLED)
    assert store.resolve("job").id == active.id
    store.set_status(active.id, S.TERMINATED)
    assert store.resolve("job").id == newest.id  # none active: the newest


def test_a_name_several_users_have_is_ambiguous_for_an_admin(store: Store) -> None:
    """X13: an admin's `rm demo` must not end whichever user's demo is newest."""
    alices = new_session(name="demo", created_at=1.0)
    bobs = new_session(name="demo", created_at=2.0)
    store.insert_session(alices.with_(owner="alice"))
    store.insert_session(bobs.with_(owner="bob"))
    assert store.resolve("demo", "alice").id == alices.id  # each user: their own
    assert store.resolve("demo", "bob").id == bobs.id
    with pytest.raises(InvalidRequest, match="several users") as caught:
        store.resolve("demo")  # every owner counts: an admin's view
    assert alices.id in str(caught.value) and bobs.id in str(caught.value)
    assert store.resolve(bobs.id).id == bobs.id  # the id always works
    store.set_status(alices.id, S.CANCELLED)
    assert store.resolve("demo").id == bobs.id  # one active: no doubt


def test_name_conflicts_until_ended(store: Store) -> None:
    first = add(store, name="web")
    with pytest.raises(Conflict, match="a session named web is already active"):
        store.insert_session(new_session(name="web"))
    add(store, name="other")
    add(store)
    add(store)  # unnamed sessions never clash
    store.set_status(first.id, S.PREPARING)
    with pytest.raises(Conflict):
        store.insert_session(new_session(name="web"))
    store.set_status(first.id, S.ERROR)
    second = add(store, name="web")
    end(store, second.id)
    add(store, name="web")
    assert len(store.list(include_ended=True)) == 6


def test_status_transitions(store: Store) -> None:
    s = add(store)
    with pytest.raises(Conflict, match="PENDING session cannot become RUNNING"):
        store.set_status(s.id, S.RUNNING)
    assert store.get(s.id).status is S.PENDING  # type: ignore[union-attr]
    p = store.set_status(s.id, S.PREPARING, "creating containers")
    assert p.status is S.PREPARING and p.status_reason == "creating containers"
    assert p.ended_at is None and p.updated_at >= s.updated_at
    r = store.set_status(s.id, S.RUNNING)
    assert r.status_reason == "" and r.ended_at is None
    t = store.set_status(s.id, S.TERMINATING)
    done = store.set_status(s.id, S.TERMINATED, "stopped by user")
    assert done.ended_at is not None and done.ended_at >= t.updated_at
    assert store.get(s.id) == done
    for status in (S.RUNNING, S.PENDING, S.ERROR):
        with pytest.raises(Conflict):
            store.set_status(s.id, status)
    with pytest.raises(NotFound):
        store.set_status("missing", S.RUNNING)


def test_ended_at_for_cancel_and_error(store: Store) -> None:
    a, b = add(store), add(store)
    assert store.set_status(a.id, S.CANCELLED, "cancelled").ended_at is not None
    err = store.set_status(b.id, S.ERROR, "image pull failed")
    assert err.ended_at is not None and err.status_reason == "image pull failed"
    again = store.set_status(b.id, S.ERROR)  # same state: reason kept, ended_at kept
    assert again.status_reason == "image pull failed" and again.ended_at == err.ended_at


def test_update_container_and_driver(store: Store) -> None:
    s = add(store, size=2)
    got = store.update_container(s.id, "sub1", status="RUNNING", container_id="c0ffee")
    sub1 = got.container("sub1")
    assert sub1 is not None and sub1.status is ContainerStatus.RUNNING
    assert sub1.container_id == "c0ffee"
    assert store.get(s.id).container("main1").status is ContainerStatus.PENDING  # type: ignore[union-attr]
    assert store.get(s.id) == got
    with pytest.raises(NotFound):
        store.update_container(s.id, "sub7", status=ContainerStatus.ERROR)
    assert store.driver(s.id) is None
    store.set_driver(s.id, Driver(4242, "laptop", "boot:17"))
    assert store.driver(s.id) == Driver(4242, "laptop", "boot:17")
    store.set_status(s.id, S.PREPARING)  # rewriting the session keeps the driver
    assert store.driver(s.id) == Driver(4242, "laptop", "boot:17")
    store.set_driver(s.id, None)
    assert store.driver(s.id) is None
    with pytest.raises(NotFound):
        store.driver("missing")
    # set_status records a driver given with it, or clears it (None), in its transaction
    store.set_status(s.id, S.RUNNING, driver=Driver(7, "laptop", "boot:17"))
    assert store.with_driver(s.id) == (store.get(s.id), Driver(7, "laptop", "boot:17"))
    store.set_status(s.id, S.TERMINATING, "rm", driver=None)
    assert store.driver(s.id) is None


def test_a_launchs_progress_is_refused_once_the_session_is_no_longer_preparing(
    store: Store,
) -> None:
    """A launch writes its containers' progress ``only_while`` PREPARING: once another
    process ended the session, the write is refused and the ended record kept."""
    s = add(store, size=2)
    store.set_status(s.id, S.PREPARING)
    got = store.update_container(s.id, "sub1", only_while=S.PREPARING, status="STARTING")
    assert got.container("sub1").status is ContainerStatus.STARTING  # type: ignore[union-attr]
    ended = store.set_status(s.id, S.TERMINATING, "terminated")
    with pytest.raises(Conflict, match="is TERMINATING now, not PREPARING"):
        store.update_container(s.id, "sub1", only_while=S.PREPARING, status="RUNNING")
    after = store.require(s.id)
    assert after.container("sub1").status is ContainerStatus.STARTING  # type: ignore[union-attr]
    assert after.status is S.TERMINATING and after.updated_at == ended.updated_at
    store.update_container(s.id, "sub1", status="TERMINATED")  # unguarded writes go on


def test_a_change_to_one_container_rewrites_its_row_alone(store: Store) -> None:
    """A launch updates each container several times: rewriting all n rows each time
    made a launch O(n^2) in rows written. Now the session's row and the one
    container's row are written, whatever the size, and the others stay as they were."""
    s = add(store, size=16)
    before = store.get(s.id)
    written = store.transactions.db.total_changes
    got = store.update_container(s.id, "sub9", status="RUNNING", container_id="beef")
    assert store.transactions.db.total_changes - written == 2, "the session's row and sub9's"
    assert store.get(s.id) == got
    for old, new in zip(before.containers, got.containers, strict=True):  # type: ignore[union-attr]
        if old.host != "sub9":
            assert new == old
    assert got.container("sub9").container_id == "beef"  # type: ignore[union-attr]


def test_keys_round_trip_and_delete(store: Store) -> None:
    s = add(store)
    assert store.load_keys(s.id) is None
    material = {
        "private_key": "-----BEGIN OPENSSH PRIVATE KEY-----\nx\n",
        "public_key": "ssh-ed25519 A",
    }
    store.save_keys(s.id, material)
    assert store.load_keys(s.id) == material
    store.save_keys(s.id, {"private_key": "new"})
    assert store.load_keys(s.id) == {"private_key": "new"}
    store.delete_keys(s.id)
    assert store.load_keys(s.id) is None
    with pytest.raises(NotFound):
        store.save_keys("missing", material)
    store.save_keys(s.id, material)
    store.delete_session(s.id)
    assert store.get(s.id) is None and store.load_keys(s.id) is None


def test_file_mode_and_manager_id(tmp_path: Any) -> None:
    path = tmp_path / "a" / "b" / "store.sqlite"
    first = Store(str(path))
    add(first)
    manager = first.manager_id
    assert uuid.UUID(manager)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    wal = f"{path}-wal"
    assert not os.path.exists(wal) or stat.S_IMODE(os.stat(wal).st_mode) == 0o600
    first.close()
    os.chmod(path, 0o644)
    again = Store(path)
    assert again.manager_id == manager
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert len(again.list()) == 1
    again.close()
    other = Store(str(tmp_path / "other.sqlite"))
    assert other.manager_id != manager
    other.close()


def test_newer_schema_refused(tmp_path: Any) -> None:
    path = str(tmp_path / "store.sqlite")
    Store(path).close()
    with sqlite3.connect(path) as db:
        db.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    with pytest.raises(ClusterError, match="newer jupyter-cluster"):
        Store(path)


# -- placement -----------------------------------------------------------------------


def test_try_place_counts_only_allocating_sessions(store: Store) -> None:
    a = add(store, size=3)
    assert store.try_place(a.id, [agent(cpu=4)]) == Placement(("a1",) * 3, ((),) * 3)
    placed = store.get(a.id)
    assert placed is not None and placed.status is S.PREPARING
    assert [c.agent for c in placed.containers] == ["a1"] * 3
    assert store.usage() == {"a1": Resources(3.0, 3 * GiB, 3 * 64 * 1024**2, 0)}

    b = add(store, size=2)
    waiting = store.try_place(b.id, [agent(cpu=4)])
    assert isinstance(waiting, Pending) and "a1 has 1 CPU" in waiting.reason
    stored = store.get(b.id)
    assert stored is not None and stored.status is S.PENDING
    assert stored.status_reason == waiting.reason
    assert all(c.agent is None for c in stored.containers)

    store.set_status(a.id, S.RUNNING)
    assert isinstance(store.try_place(b.id, [agent(cpu=4)]), Pending)
    store.set_status(a.id, S.TERMINATING)  # still holds its room while stopping
    assert isinstance(store.try_place(b.id, [agent(cpu=4)]), Pending)
    store.set_status(a.id, S.TERMINATED)
    assert store.usage() == {}
    assert isinstance(store.try_place(b.id, [agent(cpu=4)]), Placement)
    got = store.get(b.id)
    assert got is not None and got.status is S.PREPARING and got.status_reason == ""
    assert store.usage()["a1"].cpu == 2.0


def test_try_place_refuses_non_pending_and_passes_invalid(store: Store) -> None:
    s = add(store)
    store.try_place(s.id, [agent()])
    with pytest.raises(Conflict, match="not PENDING"):
        store.try_place(s.id, [agent()])
    too_big = add(store, size=8)
    with pytest.raises(InvalidRequest):
        store.try_place(too_big.id, [agent(cpu=4)])
    with pytest.raises(InvalidRequest, match="resource group"):
        store.try_place(too_big.id, [AgentSlot("x", "gpu-group", Resources(64, 64 * GiB, 0, 0))])
    assert store.get(too_big.id) == too_big  # rolled back: unchanged
    with pytest.raises(NotFound):
        store.try_place("missing", [agent()])


def test_gpu_ids_not_reused(store: Store) -> None:
    slots = [agent(cpu=16, gpus=("0", "1", "2", "3"))]
    a, b, c = (add(store, gpu=2) for _ in range(3))
    first, second = store.try_place(a.id, slots), store.try_place(b.id, slots)
    assert isinstance(first, Placement) and isinstance(second, Placement)
    assert first.gpu_ids == (("0", "1"),) and second.gpu_ids == (("2", "3"),)
    assert store.get(b.id).containers[0].gpu_ids == ("2", "3")  # type: ignore[union-attr]
    assert isinstance(store.try_place(c.id, slots), Pending)
    store.set_status(a.id, S.ERROR)  # an errored session gives its GPUs back
    third = store.try_place(c.id, slots)
    assert isinstance(third, Placement) and third.gpu_ids == (("0", "1"),)


def test_multi_node_records_agents_in_host_order(store: Store) -> None:
    s = add(store, size=3, mode="multi-node")
    result = store.try_place(s.id, [agent("a1", cpu=2), agent("a2", cpu=1)])
    assert isinstance(result, Placement) and result.agent_count == 2
    got = store.get(s.id)
    assert got is not None
    assert tuple(c.agent for c in got.containers) == result.agents == ("a1", "a1", "a2")
    assert store.usage() == {
        "a1": Resources(2.0, 2 * GiB, 2 * 64 * 1024**2, 0),
        "a2": Resources(1.0, GiB, 64 * 1024**2, 0),
    }


# -- several processes sharing one database --------------------------------------------


@pytest.mark.parametrize("fresh", [False, True], ids=["shared-store", "fresh-store"])
def test_processes_never_overbook(tmp_path: Any, fresh: bool) -> None:
    path, n = str(tmp_path / "store.sqlite"), 8
    sids: list[str | None] = [None] * n
    if not fresh:
        setup = Store(path)
        sids = [add(setup, cpu=1).id for _ in range(n)]
        setup.close()
    ctx = multiprocessing.get_context("spawn")
    barrier, results = ctx.Barrier(n), ctx.Queue()
    slots = [agent(cpu=4)]
    work = [(path, s, slots, barrier, results) for s in sids]
    procs = [ctx.Process(target=place_worker, args=args) for args in work]
    for p in procs:
        p.start()
    outcomes = [results.get(timeout=120) for _ in procs]
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    kinds = sorted(kind for _, _, kind in outcomes)
    assert kinds == ["Pending"] * 4 + ["Placement"] * 4, outcomes
    assert len({manager for _, manager, _ in outcomes}) == 1
    check = Store(path)
    sessions = check.list()
    assert len(sessions) == n
    assert sorted(s.status.value for s in sessions) == ["PENDING"] * 4 + ["PREPARING"] * 4
    assert check.usage()["a1"].cpu == 4.0
    check.close()


def test_cancelling_a_pending_session_ends_its_never_created_containers(store: Store) -> None:
    session = add(store, 3)
    assert {c.status for c in session.containers} == {ContainerStatus.PENDING}
    store.set_status(session.id, S.CANCELLED, "cancelled by the user")
    cancelled = store.get(session.id)
    assert cancelled is not None
    assert cancelled.status is S.CANCELLED
    assert [c.status for c in cancelled.containers] == [ContainerStatus.TERMINATED] * 3


def _in_another_process(path: str, code: str) -> str:
    """Run ``code`` with ``store`` open on ``path`` in a fresh interpreter; its stdout."""
    script = (
        "from jupyter_cluster.engine.store.sessions import Store\n"
        "from tests.unit.support import new_session\n"
        f"store = Store({path!r})\n"
        f"{code}\n"
        "store.close()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60
    )
    return done.stdout


def test_a_second_store_in_one_process_keeps_processes_in_step(tmp_path: Any) -> None:
    """Opening a second Store on the same file must not drop the first one's SQLite
    locks: then the next process to close its store deleted the shared WAL, and this
    process and the others stopped seeing each other's writes."""
    path = str(tmp_path / "shared.sqlite")
    first = Store(path)
    try:
        first.insert_session(new_session(sid="00000000-0000-4000-8000-000000000001"))
        Store(path).close()  # e.g. a kernel provisioner's manager in the same server
        second = "00000000-0000-4000-8000-000000000002"
        _in_another_process(path, f"store.insert_session(new_session(sid={second!r}))")
        assert first.get("00000000-0000-4000-8000-000000000002") is not None
        first.insert_session(new_session(sid="00000000-0000-4000-8000-000000000003"))
        seen = _in_another_process(path, "print(sorted(s.id[-1] for s in store.list()))")
        assert seen.strip() == "['1', '2', '3']"
    finally:
        first.close()
