"""The local engine's folder-file methods: the Engine protocol's side of data folders' files.

:class:`~jupyter_cluster.engine.folder_file_ops.FolderFileOps` (mixed into
ClusterManager) on a real directory, no Docker: bytes stream in and out in chunks,
every change lands in the owner's folder, another owner's folder of the same name
stays apart, and a path a front end did not check (``..``, a ``/`` inside a name, an
empty or ``.`` name) is refused by the engine itself before it touches the disk.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from jupyter_cluster.core.folder_streams import CHUNK
from jupyter_cluster.engine.folder_file_ops import FolderFileOps
from jupyter_cluster.engine.folder_space import FolderSpace
from jupyter_cluster.errors import InvalidRequest, NotFound


class Folders:
    """What the mixin asks of ClusterManager's ``folders``: an owner's space."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def space(self, owner: str) -> FolderSpace:
        return FolderSpace(str(self.root), owner, per_owner=True, work_uid=os.getuid())


class Engine(FolderFileOps):
    def __init__(self, root: Path) -> None:
        self.folders = Folders(root)  # type: ignore[assignment]


def test_files_stream_in_and_out_of_ones_own_folder(tmp_path: Path) -> None:
    async def run() -> None:
        engine = Engine(tmp_path)
        top = Path(engine.folders.space("alice").create("data").path)
        engine.folders.space("bob").create("data")
        await engine.make_folder_dir("data", ("sub",), owner="alice")
        blob = os.urandom(2 * CHUNK + 11)
        upload = await engine.upload_folder_file("data", ("sub", "f.bin"), owner="alice")
        for at in range(0, len(blob), 4096 * 17):
            await upload.write(blob[at : at + 4096 * 17])
        assert not (top / "sub" / "f.bin").exists()  # nothing in place before commit
        assert await upload.commit() == len(blob)
        opened = await engine.open_folder_path("data", ("sub", "f.bin"), owner="alice")
        assert opened.entries is None and opened.size == len(blob)
        pieces = [piece async for piece in opened.chunks()]
        assert b"".join(pieces) == blob and max(map(len, pieces)) <= CHUNK
        listed = await engine.open_folder_path("data", ("sub",), owner="alice")
        assert [e["name"] for e in listed.entries or ()] == ["f.bin"]
        entry = await engine.folder_entry("data", ("sub", "f.bin"), owner="alice")
        assert (entry["type"], entry["size"]) == ("file", len(blob))
        await engine.move_folder_path("data", ("sub", "f.bin"), ("g.bin",), owner="alice")
        assert (top / "g.bin").read_bytes() == blob
        bobs = await engine.open_folder_path("data", (), owner="bob")
        assert bobs.entries == []  # his folder of the same name is his own
        with pytest.raises(NotFound):
            await engine.folder_entry("data", ("g.bin",), owner="bob")
        cut = await engine.upload_folder_file("data", ("cut.bin",), owner="alice")
        await cut.write(b"x" * 100)
        cut.abort()
        await engine.delete_folder_path("data", ("sub",), recursive=True, owner="alice")
        assert sorted(os.listdir(top)) == ["g.bin"]

    asyncio.run(run())


@pytest.mark.parametrize("bad", [("..",), ("a", ".."), ("a/b",), ("",), (".",), ("a\0",)])
def test_the_engine_refuses_paths_no_front_end_checked(
    tmp_path: Path, bad: tuple[str, ...]
) -> None:
    async def run() -> None:
        engine = Engine(tmp_path)
        engine.folders.space("alice").create("data")
        for attempt in (
            engine.folder_entry("data", bad, owner="alice"),
            engine.open_folder_path("data", bad, owner="alice"),
            engine.upload_folder_file("data", bad, owner="alice"),
            engine.make_folder_dir("data", bad, owner="alice"),
            engine.move_folder_path("data", ("x",), bad, owner="alice"),
            engine.delete_folder_path("data", bad, owner="alice"),
        ):
            with pytest.raises(InvalidRequest):
                await attempt

    asyncio.run(run())
