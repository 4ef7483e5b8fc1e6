"""Execs are recorded as use of a session (#14 item 5), without Docker: the store keeps
each running exec with its process and when one last began or ended, whichever
process ran it; the manager records them around the command, even when it fails."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from jupyter_cluster.core.models import LaunchSpec, Session
from jupyter_cluster.core.naming import DEFAULT_IMAGE, plan_containers
from jupyter_cluster.engine.agents.fake import ExecCall, FakeAgent, FakeContainer
from jupyter_cluster.engine.drivers import driver_alive, this_process
from jupyter_cluster.engine.manager import ClusterManager
from jupyter_cluster.engine.store import Store
from jupyter_cluster.errors import AgentError, NotFound


def manager_for(tmp_path: Path, agent: FakeAgent) -> ClusterManager:
    return ClusterManager(
        db_path=str(tmp_path / "cluster.db"),
        data_root=str(tmp_path / "folders"),
        agent_factory=lambda config: agent,
    )


async def test_the_manager_records_an_exec_while_it_runs(tmp_path: Path) -> None:
    agent = FakeAgent("local", ready_on_start=True)
    manager = manager_for(tmp_path, agent)
    session = await manager.launch(manager.make_spec(image=DEFAULT_IMAGE, size=2))
    assert manager.store.exec_activity(session.id) == (None, [])
    seen: list[object] = []

    def handler(box: FakeContainer, call: ExecCall) -> tuple[int, bytes]:
        seen.append(manager.store.exec_activity(session.id))  # while it runs
        return 3, b""

    agent.exec_handler = handler
    began = time.time()
    assert await manager.exec(session.id, "sub1", ["false"]) == 3
    (during,) = seen
    assert during[1] == [this_process()] and during[0] >= began  # type: ignore[index]
    last, running = manager.store.exec_activity(session.id)
    assert running == [] and last is not None and began <= last <= time.time()

    agent.fail_on["exec"] = AgentError("the engine went away")
    with pytest.raises(AgentError):
        await manager.exec(session.id, "main1", ["true"])
    last_after, running = manager.store.exec_activity(session.id)
    assert running == [] and last_after is not None and last_after >= last
    await manager.terminate(session.id)


def test_the_store_keeps_execs_per_process_and_forgets_them_with_the_session(
    tmp_path: Path,
) -> None:
    store = Store(tmp_path / "cluster.db")
    with pytest.raises(NotFound):
        store.exec_began("no-such-session", this_process())
    sid = "4f1c2c1e-0000-4000-8000-000000000001"
    spec = LaunchSpec.create(image=DEFAULT_IMAGE)
    store.insert_session(Session(id=sid, spec=spec, containers=plan_containers(sid, 1)))
    # a process that has ended leaves its record, but no longer counts as running
    ended = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    gone = this_process()._replace(pid=int(ended.stdout), started="0:0")
    first = store.exec_began(sid, this_process())
    store.exec_began(sid, gone)
    _, running = store.exec_activity(sid)
    assert running == [this_process(), gone]
    assert [driver_alive(d) for d in running] == [True, False]
    store.exec_ended(first)
    assert store.exec_activity(sid)[1] == [gone]
    store.delete_session(sid)
    assert store.exec_activity(sid) == (None, [])
    store.close()
