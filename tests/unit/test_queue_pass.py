"""The store's queue pass (``PlacingStore.place_waiting``): the whole waiting queue
placed in one write transaction, in the site's order, on agents that have the image
first; reasons that say a session's place in the queue; cancellations (timeout, a
dead driver, a request no agent can hold any more); and no double-booking when two
stores (as two processes) place the same queue at once."""

from __future__ import annotations

import random
import sqlite3
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from jupyter_cluster.core.models import LaunchSpec, Session
from jupyter_cluster.core.naming import plan_containers
from jupyter_cluster.core.resources import Resources
from jupyter_cluster.core.scheduler import AgentSlot
from jupyter_cluster.core.state import SessionStatus
from jupyter_cluster.engine.store.drivers import Driver
from jupyter_cluster.engine.store.sessions import Store

GIB = 1024**3


@pytest.fixture
def store(tmp_path: Path) -> Any:
    s = Store(tmp_path / "cluster.db")
    yield s
    s.close()


def agent(aid: str = "a1", cpu: float = 4, **kw: Any) -> AgentSlot:
    return AgentSlot(aid, "default", Resources(cpu, 64 * GIB, 0, 0), **kw)


def add(
    store: Store,
    name: str,
    cpu: float = 1,
    *,
    owner: str = "",
    created: float = 0.0,
    size: int = 1,
    image: str = "img",
    priority: int = 0,
    mode: str = "single-node",
) -> str:
    spec = LaunchSpec.create(
        image=image, size=size, cpu=cpu, mem="1g", name=name, priority=priority, mode=mode
    )
    session = Session(
        id=f"id-{name}",
        spec=spec,
        containers=plan_containers(f"id-{name}", size),
        created_at=created or time.time() + len(store.list()) * 0.001,
        owner=owner,
    )
    store.insert_session(session)
    return session.id


def status(store: Store, sid: str) -> SessionStatus:
    return store.require(sid).status


def test_the_queue_is_placed_in_order_and_waiting_reasons_say_where(store: Store) -> None:
    ids = [add(store, f"s{i}", cpu=2) for i in range(4)]
    done = store.place_waiting({"img": [agent(cpu=4)]})
    assert done.placed == ids[:2] and done.waiting == 2 and not done.cancelled
    placed = store.require(ids[0])
    assert placed.status is SessionStatus.PREPARING and placed.containers[0].agent == "a1"
    assert set(placed.timings) == {"queue", "place"} and placed.status_reason == ""
    head, second = store.require(ids[2]), store.require(ids[3])
    assert head.status_reason.startswith(
        "1st in the queue of resource group default (first in, first out): waiting for one agent"
    )
    assert second.status_reason.startswith("2nd in the queue of resource group default")
    assert "needs 1 x (2 CPU, 1g memory, 64m shm) on one agent with room" in second.status_reason
    assert "waiting behind 1 earlier session(s) (next: s2)" in second.status_reason
    # Nothing changed: a second pass places nothing and keeps every reason.
    assert store.place_waiting({"img": [agent(cpu=4)]}).placed == []
    store.set_status(ids[0], SessionStatus.ERROR)
    assert store.place_waiting({"img": [agent(cpu=4)]}).placed == [ids[2]]
    assert store.require(ids[3]).status_reason.startswith("1st in the queue")


def test_a_multi_node_session_is_placed_whole_or_not_at_all(store: Store) -> None:
    agents = [agent(f"a{i}", cpu=2, swarm="s") for i in (1, 2, 3)]
    blocker = add(store, "blocker", cpu=1)
    gang = add(store, "gang", cpu=2, size=3, mode="multi-node")
    assert store.place_waiting({"img": agents}).placed == [blocker]
    assert [c.agent for c in store.require(gang).containers] == [None] * 3
    store.set_status(blocker, SessionStatus.ERROR)
    assert store.place_waiting({"img": agents}).placed == [gang]
    assert sorted(c.agent or "" for c in store.require(gang).containers) == ["a1", "a2", "a3"]


def test_agents_that_have_the_image_come_first(store: Store) -> None:
    sid = add(store, "s", image="big")
    roomy = agent("a1", cpu=16, has_image=True, image_local=False)  # would pull it
    small = agent("a2", cpu=2)  # has it
    store.place_waiting({"big": [roomy, small]})
    assert store.require(sid).containers[0].agent == "a2"
    # Sessions of an image the pass was not told about wait for the next pass.
    later = add(store, "later", image="new")
    assert store.place_waiting({"big": [roomy, small]}).placed == []
    assert status(store, later) is SessionStatus.PENDING


def test_fair_share_lets_the_owner_holding_less_go_first(store: Store) -> None:
    add(store, "ann-running", cpu=2, owner="ann")
    store.place_waiting({"img": [agent(cpu=3)]})
    ann = add(store, "ann-next", cpu=1, owner="ann", created=2000)
    bob = add(store, "bob-next", cpu=1, owner="bob", created=2001)
    done = store.place_waiting({"img": [agent(cpu=3)]}, order="fair-share")
    assert done.placed == [bob]
    assert store.require(ann).status_reason.startswith(
        "1st in the queue of resource group default (fair share)"
    )
    # FIFO would have taken ann's first.
    store.set_status(bob, SessionStatus.ERROR)
    assert store.place_waiting({"img": [agent(cpu=3)]}).placed == [ann]


def test_priority_goes_first_and_backfill_still_applies(store: Store) -> None:
    add(store, "running", cpu=2)
    assert len(store.place_waiting({"img": [agent(cpu=4)]}).placed) == 1
    low = add(store, "low", cpu=2)
    high = add(store, "high", cpu=3, priority=5)
    small = add(store, "small", cpu=1)
    done = store.place_waiting({"img": [agent(cpu=4)]}, order="priority")
    assert done.placed == [] and done.waiting == 3  # high waits; nobody overtakes it
    assert store.require(high).status_reason.startswith("1st in the queue")
    assert "2nd in the queue of resource group default (priority)" in (
        store.require(low).status_reason
    )
    done = store.place_waiting({"img": [agent(cpu=4)]}, order="priority", backfill=True)
    assert done.placed == [low]  # high cannot fit; low is next in priority order
    assert status(store, high) is SessionStatus.PENDING
    assert status(store, small) is SessionStatus.PENDING
    assert "priority, backfill" in store.require(high).status_reason


def test_timeouts_dead_drivers_and_impossible_requests_are_cancelled(store: Store) -> None:
    old = add(store, "old", created=1.0)
    dead = add(store, "dead")
    too_big = add(store, "big", cpu=64)
    fine = add(store, "fine")
    gone = Driver(999_999, "this-host", "")
    store.set_driver(dead, gone)
    store.set_driver(fine, Driver(1, "this-host", ""))
    done = store.place_waiting(
        {"img": [agent(cpu=4)]}, timeout=3600, alive=lambda driver: driver != gone
    )
    assert set(done.cancelled) == {old, dead, too_big} and done.placed == [fine]
    assert "pending_timeout" in store.require(old).status_reason
    assert "(pid 999999) exited" in store.require(dead).status_reason
    assert "no agent can hold it any more" in store.require(too_big).status_reason
    assert all(status(store, s) is SessionStatus.CANCELLED for s in (old, dead, too_big))


def test_two_stores_placing_at_once_never_double_book(tmp_path: Path) -> None:
    path = tmp_path / "cluster.db"
    first, second = Store(path), Store(path)
    try:
        ids = [add(first, f"s{i}", cpu=1) for i in range(40)]
        agents = [agent("a1", cpu=4), agent("a2", cpu=3)]
        placed: list[list[str]] = []

        def run(store: Store) -> None:
            for _ in range(5):
                placed.append(store.place_waiting({"img": agents}).placed)

        threads = [threading.Thread(target=run, args=(s,)) for s in (first, second)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        everything = [sid for batch in placed for sid in batch]
        assert sorted(everything) == sorted(ids[:7])  # each once, 7 CPUs in all
        on = [first.require(sid).containers[0].agent for sid in ids[:7]]
        assert on.count("a1") == 4 and on.count("a2") == 3
    finally:
        first.close()
        second.close()


def test_host_network_agents_take_one_container_each(store: Store) -> None:
    a, b = add(store, "a"), add(store, "b")
    hosted = [replace(agent("h1", cpu=8), one_container=True)]
    assert store.place_waiting({"img": hosted}).placed == [a]
    assert status(store, b) is SessionStatus.PENDING


def test_a_new_launch_first_in_its_order_is_placed_alone(store: Store) -> None:
    agents = [agent(cpu=4)]
    add(store, "big-running", cpu=2, owner="ann")
    store.place_waiting({"img": agents})
    waiting = add(store, "ann-waits", cpu=3, owner="ann")  # does not fit in the 2 left
    store.place_waiting({"img": agents})
    # FIFO: someone of the group waits, so the new one is not first: a pass decides.
    fifo = add(store, "fifo", cpu=1, owner="bob")
    assert store.place_if_first(fifo, agents) is None
    assert status(store, fifo) is SessionStatus.PENDING
    # Fair share: bob holds nothing, ann holds 2 CPUs: bob's launch comes first.
    placed = store.place_if_first(fifo, agents, order="fair-share")
    assert placed is not None and placed.agents == ("a1",)
    assert status(store, fifo) is SessionStatus.PREPARING
    assert set(store.require(fifo).timings) == {"queue", "place"}
    assert status(store, waiting) is SessionStatus.PENDING
    # Priority: a higher one is first; when it does not fit it says it is 1st.
    high = add(store, "high", cpu=2, owner="ann", priority=3)
    found = store.place_if_first(high, agents, order="priority")
    assert found is not None and not isinstance(found, type(placed))
    assert store.require(high).status_reason.startswith(
        "1st in the queue of resource group default (priority): waiting for one agent"
    )
    low = add(store, "low", cpu=1, owner="cy", priority=-1)
    assert store.place_if_first(low, agents, order="priority") is None


def test_placing_alone_decides_as_a_whole_pass(tmp_path: Path) -> None:
    """Random queues: whenever the new launch is placed alone, a pass over a copy of
    the same store places it on the same agents (or leaves it waiting too)."""
    rng = random.Random(7)
    decided = 0
    for case in range(40):
        path = tmp_path / f"c{case}.db"
        store = Store(path)
        agents = [agent(f"a{i}", cpu=rng.choice([2, 4, 8]), swarm="s") for i in range(3)]
        order = rng.choice(["fifo", "priority", "fair-share"])
        for i in range(rng.randrange(0, 8)):
            add(store, f"r{i}", cpu=rng.choice([1, 2, 3]), owner=rng.choice("abc"))
        store.place_waiting({"img": agents}, order=order)
        for i in range(rng.randrange(0, 4)):
            add(store, f"w{i}", cpu=rng.choice([1, 2, 4]), owner=rng.choice("abc"),
                priority=rng.randrange(3))  # fmt: skip
        new = add(store, "new", cpu=rng.choice([1, 2]), owner=rng.choice("abcd"),
                  priority=rng.randrange(3))  # fmt: skip
        copy_path = tmp_path / f"c{case}-copy.db"
        with sqlite3.connect(copy_path) as target, store.tx(write=False) as db:
            db.backup(target)
        other = Store(copy_path)
        try:
            alone = store.place_if_first(new, agents, order=order)
            other.place_waiting({"img": agents}, order=order)
            if alone is None:
                continue
            decided += 1
            mine, theirs = store.require(new), other.require(new)
            assert mine.status is theirs.status, (case, order)
            assert [c.agent for c in mine.containers] == [c.agent for c in theirs.containers]
        finally:
            store.close()
            other.close()
    assert decided >= 10  # the shortcut was taken often enough to mean something


def test_a_waiting_reason_never_names_another_users_session(store: Store) -> None:
    """Names are per owner: bob learns that he waits behind someone, not alice's name."""
    add(store, "full", cpu=4, owner="carol")
    alices = add(store, "alices-secret-run", cpu=2, owner="alice")
    bobs = add(store, "bobs", cpu=2, owner="bob")
    alices_second = add(store, "alices-second", cpu=2, owner="alice")
    store.place_waiting({"img": [agent(cpu=4)]})
    assert store.require(alices).status_reason.startswith("1st in the queue")
    bob_reason = store.require(bobs).status_reason
    assert "(next: another user's session)" in bob_reason, bob_reason
    assert "alices-secret-run" not in bob_reason
    assert "(next: alices-secret-run)" in store.require(alices_second).status_reason
