"""Reconciliation racing a launch that another process drives to its end.

A launch's driver marks the session RUNNING and then clears its driver record. A
reconciliation in another process (any CLI command runs one) that read the
session's status and its driver apart could see a PREPARING session with no
driver between the two and tear the just-started session down as abandoned
("the process launching it (unrecorded) exited"). A session submitted by one
process must likewise never be stored, even for a moment, without its driver.
These tests make the launch end at the worst moment, deterministically.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from jupyter_cluster.core.naming import DEFAULT_IMAGE, LABEL_SESSION
from jupyter_cluster.core.state import SessionStatus
from jupyter_cluster.engine.reconcile import Reconciler
from jupyter_cluster.engine.store.drivers import Driver, this_process
from jupyter_cluster.engine.store.sessions import Store

from .test_drivers import exited_pid
from .test_reconcile import one_agent


def back_to_preparing(store: Store, session_id: str, driver: Driver) -> None:
    """Record a session as a live driver's launch that has not finished yet (its
    containers may already run): the state a launch is in just before its end."""
    preparing = store.require(session_id).with_(status=SessionStatus.PREPARING)
    with store.tx() as db:
        store._write(db, preparing)
    store.set_driver(session_id, driver)


def finish_launch(store: Store, session_id: str) -> None:
    """What a launch's driver does last: RUNNING, then its record cleared."""
    store.set_status(session_id, SessionStatus.RUNNING, "")
    store.set_driver(session_id, None)


class FinishOnFirstRead:
    """The store, but the launch of ``session_id`` finishes right after the first
    call that names it once ``armed``: whatever reconciliation reads next is the
    finished launch."""

    def __init__(self, store: Store, session_id: str) -> None:
        self.store, self.session_id, self.armed, self.fired = store, session_id, False, False

    def __getattr__(self, name: str) -> Any:
        real = getattr(self.store, name)
        if not callable(real):
            return real

        def call(*args: Any, **kwargs: Any) -> Any:
            result = real(*args, **kwargs)
            if self.armed and not self.fired and self.session_id in args:
                self.fired = True
                finish_launch(self.store, self.session_id)
            return result

        return call


async def test_a_launch_that_ends_while_reconciliation_reads_it_keeps_running(
    tmp_path: Path,
) -> None:
    manager, agent = one_agent(tmp_path)
    session = await manager.launch(manager.make_spec(image=DEFAULT_IMAGE, size=2))
    back_to_preparing(manager.store, session.id, this_process())
    store = FinishOnFirstRead(manager.store, session.id)
    real_list: Callable[..., Any] = agent.list_containers

    async def scan_then_arm(labels: Mapping[str, str], **how: Any) -> Any:
        found = await real_list(labels, **how)
        store.armed = True  # the scan saw the containers; the reads come next
        return found

    agent.list_containers = scan_then_arm  # type: ignore[method-assign]
    reconciler = Reconciler(
        store,  # type: ignore[arg-type]
        {"local": agent},
        orphan_policy="remove",
        finish_termination=manager.terminate,
    )
    await reconciler.run()
    agent.list_containers = real_list  # type: ignore[method-assign]
    assert store.fired, "the launch was never finished during the pass"
    after = manager.store.require(session.id)
    assert after.status is SessionStatus.RUNNING, after.status_reason
    assert len([c for c in agent.containers.values() if c.status == "running"]) == 2
    await manager.terminate(session.id)


async def test_a_launch_that_ends_while_another_is_cleaned_up_keeps_running(
    tmp_path: Path,
) -> None:
    """The abandoned launch (its driver died) is cleaned up first; while that awaits
    its agent, the other launch, not on Docker when the scan ran, finishes."""
    manager, agent = one_agent(tmp_path)
    abandoned = await manager.submit(manager.make_spec(image=DEFAULT_IMAGE, name="abandoned"))
    finishing = await manager.submit(manager.make_spec(image=DEFAULT_IMAGE, name="finishing"))
    back_to_preparing(manager.store, abandoned.id, this_process(exited_pid()))
    back_to_preparing(manager.store, finishing.id, this_process())
    real_list: Callable[..., Any] = agent.list_containers

    async def finish_during_cleanup(labels: Mapping[str, str], **how: Any) -> Any:
        if labels.get(LABEL_SESSION) == abandoned.id:  # the clean-up of the first one
            finish_launch(manager.store, finishing.id)
        return await real_list(labels, **how)

    agent.list_containers = finish_during_cleanup  # type: ignore[method-assign]
    await manager.refresh()
    agent.list_containers = real_list  # type: ignore[method-assign]
    gone = manager.store.require(abandoned.id)
    assert gone.status is SessionStatus.ERROR
    assert gone.status_reason.startswith("the process launching it (pid ")
    after = manager.store.require(finishing.id)
    assert after.status is SessionStatus.RUNNING, after.status_reason
    await manager.terminate(finishing.id)


async def test_a_submitted_session_is_never_stored_without_its_driver(tmp_path: Path) -> None:
    manager, _agent = one_agent(tmp_path)
    real_insert = manager.store.insert_session
    seen: list[Driver | None] = []

    def insert_and_look(session: Any, *args: Any, **kwargs: Any) -> None:
        real_insert(session, *args, **kwargs)
        seen.append(manager.store.driver(session.id))  # what another process sees now

    manager.store.insert_session = insert_and_look  # type: ignore[method-assign]
    session = await manager.submit(manager.make_spec(image=DEFAULT_IMAGE))
    assert seen and seen[0] is not None and seen[0].pid == os.getpid()
    record = manager.store.with_driver(session.id)
    assert record is not None and record[1] == seen[0]
    await manager.terminate(session.id)


async def test_status_and_driver_change_together_at_running_and_at_removal(
    tmp_path: Path,
) -> None:
    """What another process reads right after each status change: a launch that
    finished has no launcher recorded any more, and a session being removed has its
    remover recorded already (else a second removal would not wait for it)."""
    manager, _agent = one_agent(tmp_path)
    real_set_status = manager.store.set_status
    seen: list[tuple[SessionStatus, Driver | None]] = []

    def set_and_look(session_id: str, *args: Any, **kwargs: Any) -> Any:
        done = real_set_status(session_id, *args, **kwargs)
        state = manager.store.launch_state(session_id)  # what another process reads now
        assert state is not None
        seen.append((state.status, state.driver))
        return done

    manager.store.set_status = set_and_look  # type: ignore[method-assign]
    session = await manager.launch(manager.make_spec(image=DEFAULT_IMAGE))
    assert session.status is SessionStatus.RUNNING
    await manager.terminate(session.id)
    drivers = dict(seen)
    assert drivers[SessionStatus.RUNNING] is None, seen
    remover = drivers[SessionStatus.TERMINATING]
    assert remover is not None and remover.pid == os.getpid(), seen
    assert seen[-1][0] is SessionStatus.TERMINATED, seen
