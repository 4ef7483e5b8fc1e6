"""Logs outlive the containers (#14 item 3), without Docker: kept at termination,
bounded, read like live logs, pruned with the history."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from traitlets.config import Config

from jupyter_cluster.core.naming import DEFAULT_IMAGE
from jupyter_cluster.core.state import SessionStatus
from jupyter_cluster.engine.agents.fake import FakeAgent
from jupyter_cluster.engine.manager import ClusterManager
from jupyter_cluster.errors import InvalidRequest, NotFound


def manager_with(tmp_path: Path, agent: FakeAgent, **settings: object) -> ClusterManager:
    return ClusterManager(
        db_path=str(tmp_path / "cluster.db"),
        data_root=str(tmp_path / "folders"),
        agent_factory=lambda config: agent,
        config=Config({"ClusterManager": settings}),
    )


async def lines(manager: ClusterManager, ref: str, host: str, **kw: object) -> list[str]:
    return [line async for line in manager.logs(ref, host, **kw)]  # type: ignore[arg-type]


async def test_a_terminated_sessions_logs_are_kept_and_read_as_before(tmp_path: Path) -> None:
    agent = FakeAgent("local", ready_on_start=True)
    manager = manager_with(tmp_path, agent)
    session = await manager.launch(manager.make_spec(image=DEFAULT_IMAGE, size=2))
    for c in session.containers:
        assert c.container_id
        for i in range(5):
            agent.emit(c.container_id, f"{c.host} line {i}")
    live = {c.host: await lines(manager, session.id, c.host) for c in session.containers}
    ended = await manager.terminate(session.id)
    assert ended.status is SessionStatus.TERMINATED
    assert all(box.status == "removed" for box in agent.containers.values())
    for host, before in live.items():
        assert await lines(manager, session.id, host) == before
        assert await lines(manager, session.id, host, tail=2) == before[-2:]
        assert await lines(manager, session.id, host, follow=True) == before  # ends
        manager.check_logs(ended, host)  # the REST handler's question: yes
        path = manager.log_archive.path(session.id, host)
        assert path.stat().st_mode & 0o777 == 0o600
        assert path.parent.stat().st_mode & 0o777 == 0o700


async def test_a_negative_tail_is_refused_live_and_kept(tmp_path: Path) -> None:
    """``tail=-1`` gave no line, silently (the notebook API, the local %cluster magic)."""
    agent = FakeAgent("local", ready_on_start=True)
    manager = manager_with(tmp_path, agent)
    session = await manager.launch(manager.make_spec(image=DEFAULT_IMAGE, size=1))
    for _ in range(2):  # running, then its kept copy
        with pytest.raises(InvalidRequest) as caught:
            await lines(manager, session.id, "main1", tail=-1)
        assert caught.value.message == "tail: give a number of lines, 0 or more, got -1"
        for wrong in ("3", 1.5, True):  # "3" raised a TypeError from a comparison
            with pytest.raises(InvalidRequest, match="tail: give a number of lines"):
                await lines(manager, session.id, "main1", tail=wrong)
        assert await lines(manager, session.id, "main1", tail=0) == []
        await manager.terminate(session.id)


async def test_kept_logs_are_bounded_by_lines_and_bytes(tmp_path: Path) -> None:
    agent = FakeAgent("local", ready_on_start=True)
    manager = manager_with(tmp_path, agent, log_keep_lines=100, log_keep_size="1k")
    session = await manager.launch(manager.make_spec(image=DEFAULT_IMAGE))
    main = session.containers[0].container_id
    assert main
    for i in range(1000):
        agent.emit(main, f"{i:08d}" + "x" * 40)
    await manager.terminate(session.id)
    kept = await lines(manager, session.id, "main1")
    assert kept[-1].startswith("00000999")  # the end of the log, not its start
    assert sum(len(k) for k in kept) <= 1024 and len(kept) <= 100


async def test_without_keep_logs_an_ended_session_has_no_logs(tmp_path: Path) -> None:
    agent = FakeAgent("local", ready_on_start=True)
    manager = manager_with(tmp_path, agent, keep_logs=False)
    session = await manager.launch(manager.make_spec(image=DEFAULT_IMAGE))
    await manager.terminate(session.id)
    try:
        await lines(manager, session.id, "main1")
    except NotFound as exc:
        assert "gone" in str(exc)
    else:
        raise AssertionError("the log of a removed container was read")


async def test_kept_logs_go_with_the_history_and_after_their_days(tmp_path: Path) -> None:
    agent = FakeAgent("local", ready_on_start=True)
    manager = manager_with(tmp_path, agent)
    old = await manager.launch(manager.make_spec(image=DEFAULT_IMAGE))
    forgotten = await manager.launch(manager.make_spec(image=DEFAULT_IMAGE))
    for s in (old, forgotten):
        await manager.terminate(s.id)
    archive = manager.log_archive
    assert archive.has(old.id, "main1") and archive.has(forgotten.id, "main1")
    month_ago = time.time() - 30 * 86400
    os.utime(archive.root / old.id, (month_ago, month_ago))
    assert archive.prune(known={old.id}) == 2  # one too old, one forgotten by the store
    assert not archive.has(old.id, "main1") and not archive.has(forgotten.id, "main1")
