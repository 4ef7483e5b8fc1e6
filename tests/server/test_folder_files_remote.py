"""The shared service's client reaches data folders' files only through the service.

What a user's own Jupyter server (and the CLI) does in team mode: a
:class:`~jupyter_cluster.client.remote_engine.RemoteEngine` with a user's token
calls the Engine protocol's folder-file methods, which stream to and from the
service's ``folders/{name}/files`` routes (here a real test server with one user per
token and ``folders_per_owner``). Alice's bytes round-trip through it in chunks,
with memory that does not grow with the file; every change lands in her folder;
the service's errors come back as the engine's (another user's folder is not
found, a link is refused, a shared folder is read-only); an upload cut short
leaves nothing.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from jupyter_cluster.client.remote_engine import RemoteEngine
from jupyter_cluster.errors import Conflict, InvalidRequest, NotFound
from tests.support.waiting import eventually

from .support import jp_async
from .test_folder_files import TokenUsers, folder, rss

pytestmark = pytest.mark.docker


@pytest.fixture
def cluster_config() -> dict[str, Any]:
    return {
        "ServerApp": {"identity_provider_class": TokenUsers},
        "ClusterManager": {"folders_per_owner": True, "shared_folders": ["datasets"]},
    }


def remote(port: int, base_url: str, token: str) -> RemoteEngine:
    return RemoteEngine(f"http://127.0.0.1:{port}{base_url}", token, allow_http=True)


async def pieces(count: int, size: int) -> AsyncIterator[bytes]:
    for i in range(count):
        yield bytes([i % 251]) * size


@jp_async
async def test_files_round_trip_through_the_service_in_chunks(
    http_server: Any, jp_http_port: int, jp_base_url: str, cluster: Any
) -> None:
    alice = remote(jp_http_port, jp_base_url, "alice-token")
    bob = remote(jp_http_port, jp_base_url, "bob-token")
    try:
        await alice.create_folder("data")
        await alice.make_folder_dir("data", ("sub",))
        count, size = 100, 1 << 20
        upload = await alice.upload_folder_file("data", ("sub", "big.bin"))
        sent = hashlib.sha256()
        base = rss()
        peak = base
        async for piece in pieces(count, size):
            await upload.write(piece)
            sent.update(piece)
            peak = max(peak, rss())
        assert await upload.commit() == count * size
        on_disk = folder(cluster, "alice", "data") / "sub" / "big.bin"
        assert on_disk.stat().st_size == count * size
        top = await alice.open_folder_path("data", ())
        assert [(e["name"], e["type"]) for e in top.entries or ()] == [("sub", "directory")]
        entry = await alice.folder_entry("data", ("sub", "big.bin"))
        assert (entry["type"], entry["size"]) == ("file", count * size)

        opened = await alice.open_folder_path("data", ("sub", "big.bin"))
        assert opened.entries is None and opened.size == count * size
        got = hashlib.sha256()
        async for data in opened.chunks():
            got.update(data)
            peak = max(peak, rss())
        assert got.digest() == sent.digest()
        growth = peak - base
        print(f"RSS growth while {count} MB went up and down: {growth >> 20} MB")
        assert growth < count * size // 4, growth  # client and service in this process

        await alice.move_folder_path("data", ("sub", "big.bin"), ("moved.bin",))
        assert (folder(cluster, "alice", "data") / "moved.bin").stat().st_size == count * size
        with pytest.raises(Conflict):
            await alice.upload_folder_file("data", ("sub",))  # a directory
        with pytest.raises(NotFound):
            await alice.upload_folder_file("data", ("nowhere", "x"))

        # bob: alice's folder does not exist for him
        for attempt in (
            bob.open_folder_path("data", ()),
            bob.folder_entry("data", ("moved.bin",)),
            bob.upload_folder_file("data", ("planted",)),
            bob.make_folder_dir("data", ("bobs",)),
            bob.move_folder_path("data", ("moved.bin",), ("stolen",)),
            bob.delete_folder_path("data", ("moved.bin",)),
        ):
            with pytest.raises(NotFound):
                await attempt
        assert (folder(cluster, "alice", "data") / "moved.bin").exists()

        # links are refused by the service, shared folders are read-only
        os.symlink("/etc", folder(cluster, "alice", "data") / "escape")
        with pytest.raises(InvalidRequest, match="link"):
            await alice.open_folder_path("data", ("escape", "passwd"))
        with pytest.raises(InvalidRequest, match="link"):
            await alice.upload_folder_file("data", ("escape", "x"))
        (Path(cluster.engine.data_root) / ".shared" / "datasets").mkdir(parents=True)
        with pytest.raises(Conflict, match="read-only"):
            await alice.upload_folder_file("datasets", ("x",))

        # an upload cut short leaves nothing behind
        upload = await alice.upload_folder_file("data", ("cut.bin",))
        await upload.write(b"x" * (1 << 20))
        upload.abort()
        top_dir = folder(cluster, "alice", "data")

        async def clean() -> bool:
            return not [
                p for p in os.listdir(top_dir) if p.startswith(".upload-") or p == "cut.bin"
            ]

        await eventually(clean, 30, "the cut-short upload to be dropped")

        await alice.delete_folder_path("data", ("sub",), recursive=True)
        await alice.delete_folder_path("data", ("moved.bin",))
        assert sorted(os.listdir(top_dir)) == ["escape"]
    finally:
        await alice.close()
        await bob.close()
