"""Execs are recorded as use of a session (#14 item 5), without Docker: the exec log
keeps each running exec with its process and when one last began or ended, whichever
process ran it; the manager records them around the command, even when it fails; the
shared service's client (team mode) records its own in a log of the user's."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from jupyter_cluster.client import remote_engine as remote
from jupyter_cluster.client.remote_engine import RemoteEngine
from jupyter_cluster.core.models import LaunchSpec, Session
from jupyter_cluster.core.naming import DEFAULT_IMAGE, plan_containers
from jupyter_cluster.core.state import SessionStatus
from jupyter_cluster.engine.agents.fake import ExecCall, FakeAgent, FakeContainer
from jupyter_cluster.engine.store.drivers import driver_alive, this_process
from jupyter_cluster.engine.store.exec_log import KEEP_LAST, ExecLog
from jupyter_cluster.errors import AgentError
from tests.unit.fake_engine import fake_manager


async def test_the_manager_records_an_exec_while_it_runs(tmp_path: Path) -> None:
    agent = FakeAgent("local", ready_on_start=True)
    manager = fake_manager(tmp_path, agent)
    session = await manager.launch(manager.make_spec(image=DEFAULT_IMAGE, size=2))
    assert manager.exec_log.activity(session.id) == (None, [])
    seen: list[object] = []

    def handler(box: FakeContainer, call: ExecCall) -> tuple[int, bytes]:
        seen.append(manager.exec_log.activity(session.id))  # while it runs
        return 3, b""

    agent.exec_handler = handler
    began = time.time()
    assert await manager.exec(session.id, "sub1", ["false"]) == 3
    (during,) = seen
    assert during[1] == [this_process()] and during[0] >= began  # type: ignore[index]
    last, running = manager.exec_log.activity(session.id)
    assert running == [] and last is not None and began <= last <= time.time()

    agent.fail_on["exec"] = AgentError("the engine went away")
    with pytest.raises(AgentError):
        await manager.exec(session.id, "main1", ["true"])
    last_after, running = manager.exec_log.activity(session.id)
    assert running == [] and last_after is not None and last_after >= last
    await manager.terminate(session.id)


def test_the_log_keeps_execs_per_process_and_who_still_runs(tmp_path: Path) -> None:
    log = ExecLog(tmp_path / "cluster.db")
    assert not (tmp_path / "cluster.db").exists()  # opened at its first use only
    sid = "4f1c2c1e-0000-4000-8000-000000000001"
    # a process that has ended leaves its record, but no longer counts as running
    ended = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    gone = this_process()._replace(pid=int(ended.stdout), started="0:0")
    first = log.began(sid, this_process())
    log.began(sid, gone)
    _, running = log.activity(sid)
    assert running == [this_process(), gone]
    assert [driver_alive(d) for d in running] == [True, False]
    log.ended(first)
    last, running = log.activity(sid)
    assert running == [gone] and last is not None
    assert log.activity("another-session") == (None, [])
    assert (tmp_path / "cluster.db").stat().st_mode & 0o777 == 0o600
    log.close()

    # another process of the user sees the same records (the file is shared)
    again = ExecLog(tmp_path / "cluster.db")
    assert again.activity(sid) == (last, [gone])
    # a session unused for KEEP_LAST seconds is forgotten, its leftover records too
    with again.tables.open().tx() as db:
        db.execute("UPDATE exec_last SET at = at - ?", (KEEP_LAST + 1,))
    other = again.began("another-session", this_process())
    assert again.activity(sid) == (None, [])
    again.ended(other)
    again.close()


async def test_the_shared_service_client_logs_its_execs_over_ssh(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """RemoteEngine.exec (team mode) runs the command over SSH; while it runs, the
    user's log shows it, and afterwards when it ended, even when it failed."""
    engine = RemoteEngine("http://127.0.0.1:1/", "token", exec_log=str(tmp_path / "a.db"))
    sid = "4f1c2c1e-0000-4000-8000-000000000002"
    session = Session(
        id=sid,
        spec=LaunchSpec.create(image=DEFAULT_IMAGE, size=2),
        containers=plan_containers(sid, 2),
        status=SessionStatus.RUNNING,
    )
    seen: list[object] = []

    async def get(ref: str) -> Session:
        return session

    async def access(ref: str) -> object:
        return object()

    class Shell:
        def __init__(self, access: object) -> None:
            pass

        async def run(self, host: str, cmd: object, on_output: object = None) -> int:
            seen.append(engine.exec_log.activity(sid))
            if cmd == ["false"]:
                raise OSError("the connection was reset")
            return 0

        async def close(self) -> None:
            pass

    monkeypatch.setattr(engine, "get", get)
    monkeypatch.setattr(engine, "access", access)
    monkeypatch.setattr(remote, "ContainerShell", Shell)
    began = time.time()
    assert await engine.exec(sid, "sub1", ["true"]) == 0
    assert seen[0] == (seen[0][0], [this_process()])  # type: ignore[index]
    last, running = engine.exec_log.activity(sid)
    assert running == [] and last is not None and began <= last <= time.time()
    with pytest.raises(OSError):
        await engine.exec(sid, "main1", ["false"])
    assert engine.exec_log.activity(sid)[1] == []
    await engine.close()
