"""No session is stuck or lost, with the fake agent: failures anywhere on the launch
path end in ERROR with a reason and nothing left; label text is never a path;
deleted key material is not left readable in the store file."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from jupyter_cluster.core.naming import DEFAULT_IMAGE, LABEL_MANAGER, LABEL_SESSION, is_uuid
from jupyter_cluster.core.state import SessionStatus
from jupyter_cluster.engine.agents.fake import FakeAgent
from jupyter_cluster.errors import LaunchFailed
from tests.unit.fake_engine import fake_manager


async def test_a_folder_deleted_before_the_launch_ends_it_in_error(tmp_path: Path) -> None:
    """Regression: errors outside the bring-up left the session PREPARING with keys."""
    agent = FakeAgent("local", ready_on_start=True)
    manager = fake_manager(tmp_path, agent)
    manager.folders_for("").create("d")
    session = await manager.submit(manager.make_spec(image=DEFAULT_IMAGE, mounts=["d"]))
    shutil.rmtree(tmp_path / "folders" / "d")
    with pytest.raises(LaunchFailed, match="no data folder"):
        await manager.drive(session.id)
    ended = await manager.get(session.id)
    assert ended.status is SessionStatus.ERROR and "d" in ended.status_reason
    assert manager.store.load_keys(session.id) is None
    assert not agent.containers and not agent.networks


async def test_an_unexpected_error_ends_the_launch_in_error(tmp_path: Path) -> None:
    agent = FakeAgent("local", ready_on_start=True)
    manager = fake_manager(tmp_path, agent)
    agent.fail_on["put_files"] = RuntimeError("disk on fire")
    session = await manager.submit(manager.make_spec(image=DEFAULT_IMAGE, size=2))
    with pytest.raises(LaunchFailed, match="disk on fire"):
        await manager.drive(session.id)
    ended = await manager.get(session.id)
    assert ended.status is SessionStatus.ERROR and "RuntimeError" in ended.status_reason
    assert manager.store.load_keys(session.id) is None
    assert all(c.status == "removed" for c in agent.containers.values()) or not agent.containers
    assert not agent.networks


async def test_adoption_never_takes_label_text_for_a_session_id(tmp_path: Path) -> None:
    assert is_uuid("4f1c2c1e-0000-4000-8000-000000000001")
    assert not is_uuid("/etc")
    assert not is_uuid("../../home")
    agent = FakeAgent("local", ready_on_start=True)
    manager = fake_manager(tmp_path, agent, orphan_policy="adopt")
    spec = manager.make_spec(image=DEFAULT_IMAGE)
    session = await manager.launch(spec)
    # relabel its container as if someone wrote a path into the session label
    (box,) = agent.containers.values()
    box.spec = box.spec.__class__(
        **{**box.spec.__dict__, "labels": {**box.spec.labels, LABEL_SESSION: "/etc"}}
    )
    assert box.spec.labels[LABEL_MANAGER] == manager.store.manager_id
    await manager.refresh()
    ids = [s.id for s in await manager.list(include_ended=True)]
    assert "/etc" not in ids
    await manager.terminate(session.id)


async def test_deleted_keys_are_not_left_in_the_store_file(tmp_path: Path) -> None:
    agent = FakeAgent("local")
    manager = fake_manager(tmp_path, agent)
    session = await manager.submit(manager.make_spec(image=DEFAULT_IMAGE))
    secret = "PRIVATE-KEY-MATERIAL-" + "z" * 200
    manager.store.save_keys(session.id, {"user": secret})
    manager.store.delete_keys(session.id)
    manager.store.close()
    data = b"".join(p.read_bytes() for p in tmp_path.glob("cluster.db*"))
    assert secret.encode() not in data
    # The same check does see deleted rows when secure_delete is off (some
    # SQLite builds default to on, some to off; the store sets it on).
    control = tmp_path / "control.db"
    db = sqlite3.connect(control, isolation_level=None)
    db.execute("PRAGMA secure_delete = OFF")
    db.execute("CREATE TABLE keys (id TEXT, material TEXT)")
    db.execute("INSERT INTO keys VALUES ('s', ?)", (secret,))
    db.execute("DELETE FROM keys")
    db.close()
    assert secret.encode() in control.read_bytes()


async def test_history_is_pruned_by_age_and_count(tmp_path: Path) -> None:
    agent = FakeAgent("local")
    manager = fake_manager(tmp_path, agent, history_max_age_days=1, history_max_count=2)
    ended = []
    for _ in range(4):
        session = await manager.submit(manager.make_spec(image=DEFAULT_IMAGE, cpu=0.5))
        ended.append(await manager.terminate(session.id))
    waiting = await manager.submit(manager.make_spec(image=DEFAULT_IMAGE, cpu=0.5))
    store = manager.store
    # by count: the two newest ended sessions stay; active ones are never pruned
    assert store.prune_history(0, 2) == 2
    kept = {s.id for s in store.list(include_ended=True)}
    assert kept == {ended[2].id, ended[3].id, waiting.id}
    # by age: ended more than a day ago
    assert store.prune_history(86400, 0, now=ended[3].ended_at + 2 * 86400) == 2  # type: ignore[operator]
    assert [s.id for s in store.list(include_ended=True)] == [waiting.id]
    await manager.start()  # applies the configured limits; nothing more to prune
    assert [s.id for s in await manager.list(include_ended=True)] == [waiting.id]
