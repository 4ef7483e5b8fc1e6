"""Renaming a data folder through the engine (``ClusterManager.rename_folder``).

A manager with the fake agent and its real store: the folder and its files move
to the new name in one rename; a bad name, an existing name (or a shared
folder's), a shared folder and a folder an active session mounts (its containers
bind-mount the folder's path) are refused with nothing changed; a link in the
data-folder root is never followed; each owner renames only their own.
"""

from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace

import pytest

from jupyter_cluster.engine import folders as folders_module
from jupyter_cluster.engine.agents.fake import DEFAULT_IMAGE, FakeAgent
from jupyter_cluster.engine.folders import DataFolders
from jupyter_cluster.errors import Conflict, InvalidRequest, NotFound
from tests.unit.fake_engine import fake_manager


async def test_a_folder_and_its_files_take_the_new_name(tmp_path: Path) -> None:
    manager = fake_manager(tmp_path, FakeAgent("local", ready_on_start=True))
    await manager.create_folder("data")
    (tmp_path / "folders" / "data" / "sub").mkdir()
    (tmp_path / "folders" / "data" / "sub" / "a.txt").write_text("kept")
    info = await manager.rename_folder("data", "results")
    assert (info.name, info.path) == ("results", str(tmp_path / "folders" / "results"))
    assert [f.name for f in await manager.list_folders()] == ["results"]
    assert (tmp_path / "folders" / "results" / "sub" / "a.txt").read_text() == "kept"
    assert not (tmp_path / "folders" / "data").exists()
    with pytest.raises(NotFound):
        await manager.rename_folder("data", "again")
    await manager.close()


async def test_bad_and_taken_names_are_refused_and_nothing_changes(tmp_path: Path) -> None:
    manager = fake_manager(tmp_path, FakeAgent("local", ready_on_start=True))
    await manager.create_folder("data")
    await manager.create_folder("other")  # empty: rename(2) alone would replace it
    (tmp_path / "folders" / "data" / "a.txt").write_text("a")
    for bad in ("../escape", "a/b", ".hidden", "", "x" * 65):
        with pytest.raises(InvalidRequest, match="name"):
            await manager.rename_folder("data", bad)
    with pytest.raises(Conflict, match="already exists"):
        await manager.rename_folder("data", "other")
    with pytest.raises(InvalidRequest):
        await manager.rename_folder("../folders/data", "x")
    assert sorted(os.listdir(tmp_path / "folders")) == ["data", "other"]
    assert os.listdir(tmp_path / "folders" / "other") == []
    assert (tmp_path / "folders" / "data" / "a.txt").read_text() == "a"
    await manager.close()


async def test_a_folder_an_active_session_mounts_keeps_its_name(tmp_path: Path) -> None:
    agent = FakeAgent("local", ready_on_start=True)
    manager = fake_manager(tmp_path, agent)
    await manager.create_folder("data")
    session = await manager.launch(
        manager.make_spec(image=DEFAULT_IMAGE, size=2, cpu=0.5, mounts=["data"])
    )
    with pytest.raises(Conflict, match=f"mounted by session.*{session.name}.*terminate"):
        await manager.rename_folder("data", "moved")
    assert (tmp_path / "folders" / "data").is_dir()
    await manager.terminate(session.id)
    assert (await manager.rename_folder("data", "moved")).name == "moved"
    await manager.close()


async def test_shared_folders_and_their_names_stay_the_administrators(tmp_path: Path) -> None:
    manager = fake_manager(
        tmp_path,
        FakeAgent("local", ready_on_start=True),
        folders_per_owner=True,
        shared_folders=["datasets"],
    )
    (tmp_path / "folders" / ".shared" / "datasets").mkdir(parents=True)
    await manager.create_folder("data", "alice")
    await manager.create_folder("data", "bob")
    with pytest.raises(Conflict, match="shared folder"):
        await manager.rename_folder("datasets", "mine", "alice")
    with pytest.raises(Conflict, match="shared folder"):
        await manager.rename_folder("data", "datasets", "alice")
    with pytest.raises(NotFound):
        await manager.rename_folder("private", "x", "bob")
    await manager.rename_folder("data", "alices", "alice")
    assert [f.name for f in await manager.list_folders("alice")] == ["alices", "datasets"]
    assert [f.name for f in await manager.list_folders("bob")] == ["data", "datasets"]
    assert (tmp_path / "folders" / ".shared" / "datasets").is_dir()
    await manager.close()


def test_a_link_in_the_root_is_never_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    folders = DataFolders(str(tmp_path / "root"))
    folders.create("data")
    os.symlink(outside, tmp_path / "root" / "link")
    with pytest.raises(InvalidRequest, match="link"):
        folders.rename("link", "renamed")
    assert (tmp_path / "root" / "link").is_symlink() and outside.is_dir()
    os.symlink(outside, tmp_path / "root" / "taken")
    with pytest.raises(Conflict, match="already exists"):
        folders.rename("data", "taken")  # a link at the new name is never replaced
    assert (tmp_path / "root" / "taken").is_symlink() and (tmp_path / "root" / "data").is_dir()


def test_without_renameat2_a_taken_name_is_still_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where the C library has no renameat2 (not Linux): checked, then rename(2)."""
    monkeypatch.setattr(folders_module.ctypes, "CDLL", lambda *a, **k: SimpleNamespace())
    folders = DataFolders(str(tmp_path))
    folders.create("data")
    folders.create("other")
    with pytest.raises(Conflict, match="already exists"):
        folders.rename("data", "other")
    assert folders.rename("data", "moved").name == "moved"
    assert sorted(os.listdir(tmp_path)) == ["moved", "other"]
