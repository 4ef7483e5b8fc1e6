"""The files inside data folders over REST: every route, owner scoping, shared read-only.

A real Jupyter server with the extension, several users (one per token, as on
the shared service of a team) and ``folders_per_owner``: Alice lists, uploads,
downloads, makes directories, renames and deletes inside her folder; Bob, with a
folder of the same name, sees none of it and cannot reach hers; the shared
folder is readable and refuses every change; a 50 MB upload streams to disk
without the server holding it in memory.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from jupyter_server.auth.identity import IdentityProvider, User
from tornado import web

from jupyter_cluster.server.handlers.folder_files import FolderFilesHandler

from .support import API_SEGMENTS, call, jp_async, ok_http

pytestmark = pytest.mark.docker
ALICE = {"Authorization": "token alice-token"}
BOB = {"Authorization": "token bob-token"}


class TokenUsers(IdentityProvider):
    """Each of two fixed tokens is one user (JupyterHub's users of the shared service)."""

    users = {"alice-token": "alice", "bob-token": "bob"}

    def get_user(self, handler: web.RequestHandler) -> User | None:
        token = handler.request.headers.get("Authorization", "").removeprefix("token ")
        name = self.users.get(token.strip())
        if not name:
            return None
        handler._token_authenticated = True  # type: ignore[attr-defined]  # no XSRF check
        return User(name)


@pytest.fixture
def cluster_config() -> dict[str, Any]:
    return {
        "ServerApp": {"identity_provider_class": TokenUsers},
        "ClusterManager": {"folders_per_owner": True, "shared_folders": ["datasets"]},
    }


def folder(cluster: Any, owner: str, name: str) -> Path:
    return Path(cluster.engine.folders_for(owner).path(name))


@jp_async
async def test_every_route_on_ones_own_folder(jp_fetch: Any, cluster: Any) -> None:
    await ok_http(jp_fetch, "folders", method="POST", body={"name": "data"}, headers=ALICE)
    files = ("folders", "data", "files")
    assert (await ok_http(jp_fetch, *files, headers=ALICE))["entries"] == []
    await ok_http(jp_fetch, *files, "sub", method="POST", params={"mkdir": "1"}, headers=ALICE)
    put = await ok_http(
        jp_fetch, *files, "sub", "a b.txt", method="PUT", body=b"hello", headers=ALICE
    )
    assert put == {"name": "data", "path": "sub/a b.txt", "size": 5}
    [entry] = (await ok_http(jp_fetch, *files, "sub", headers=ALICE))["entries"]
    assert (entry["name"], entry["type"], entry["size"]) == ("a b.txt", "file", 5)
    code, _, response = await call(
        jp_fetch, *files, "sub", "a b.txt", params={"download": "1"}, headers=ALICE
    )
    assert code == 200 and response.body == b"hello"
    assert "attachment" in response.headers["Content-Disposition"]
    on_disk = folder(cluster, "alice", "data") / "sub" / "a b.txt"
    assert on_disk.read_bytes() == b"hello"
    assert on_disk.stat().st_uid == cluster.engine.hardening.work_uid or os.getuid() != 0

    await ok_http(
        jp_fetch, *files, "sub", "a b.txt", method="PATCH", body={"to": "b.txt"}, headers=ALICE
    )
    assert (folder(cluster, "alice", "data") / "b.txt").read_bytes() == b"hello"
    code, data, _ = await call(jp_fetch, *files, "sub", method="POST", body="", headers=ALICE)
    assert (code, data["field"]) == (400, "mkdir")
    code, data, _ = await call(
        jp_fetch, *files, "b.txt", method="PATCH", body={"to": "../x"}, headers=ALICE
    )
    assert (code, data["field"]) == (400, "to")
    await ok_http(jp_fetch, *files, "sub", "c", method="PUT", body=b"", headers=ALICE)
    code, data, _ = await call(jp_fetch, *files, "sub", method="DELETE", headers=ALICE)
    assert code == 409 and "recursive" in data["message"]
    await ok_http(
        jp_fetch, *files, "sub", method="DELETE", params={"recursive": "1"}, headers=ALICE
    )
    await ok_http(jp_fetch, *files, "b.txt", method="DELETE", headers=ALICE)
    assert (await ok_http(jp_fetch, *files, headers=ALICE))["entries"] == []
    code, _, _ = await call(jp_fetch, *files, "gone", headers=ALICE)
    assert code == 404
    code, data, _ = await call(jp_fetch, *files, params={"download": "maybe"}, headers=ALICE)
    assert (code, data["field"]) == (400, "download")
    for method in ("PUT", "POST", "PATCH", "DELETE"):  # the top is a folder: folders/{name}
        code, _, response = await call(jp_fetch, *files, method=method, body=b"", headers=ALICE)
        assert (code, response.headers["Allow"]) == (405, "GET"), method
    code, _, response = await call(jp_fetch, *files, "b.txt", method="TRACE", headers=ALICE)
    assert (code, response.headers["Allow"]) == (405, "GET, PUT, POST, PATCH, DELETE")


@jp_async
async def test_files_read_back_as_bytes_even_when_empty(jp_fetch: Any, cluster: Any) -> None:
    """An empty file is bytes too, not an empty JSON reply (found by schemathesis)."""
    await ok_http(jp_fetch, "folders", method="POST", body={"name": "data"}, headers=ALICE)
    files = ("folders", "data", "files")
    for name, content in (("empty", b""), ("full", b"hello")):
        await ok_http(jp_fetch, *files, name, method="PUT", body=content, headers=ALICE)
        for params in ({}, {"download": "1"}):
            code, _, response = await call(jp_fetch, *files, name, params=params, headers=ALICE)
            assert (code, response.body) == (200, content), (name, params)
            assert response.headers["Content-Type"] == "application/octet-stream", (name, params)


@jp_async
async def test_other_owners_files_and_links_out_stay_out_of_reach(
    jp_fetch: Any, cluster: Any
) -> None:
    for who in (ALICE, BOB):
        await ok_http(jp_fetch, "folders", method="POST", body={"name": "data"}, headers=who)
    await ok_http(jp_fetch, "folders", method="POST", body={"name": "private"}, headers=ALICE)
    await ok_http(
        jp_fetch,
        "folders",
        "private",
        "files",
        "s.txt",
        method="PUT",
        body=b"alice's",
        headers=ALICE,
    )
    assert (await ok_http(jp_fetch, "folders", "data", "files", headers=BOB))["entries"] == []
    for method, body in (("GET", None), ("PUT", b"x"), ("DELETE", None)):
        code, _, _ = await call(
            jp_fetch, "folders", "private", "files", "s.txt", method=method, body=body, headers=BOB
        )
        assert code == 404, method
    # a link Bob plants (say from a session) to Alice's folder or /etc is not followed
    bobs = folder(cluster, "bob", "data")
    os.symlink(folder(cluster, "alice", "private"), bobs / "alice")
    os.symlink("/etc", bobs / "etc")
    for path in (("alice", "s.txt"), ("etc", "passwd"), ("alice",)):
        code, data, _ = await call(jp_fetch, "folders", "data", "files", *path, headers=BOB)
        assert code == 400 and "link" in data["message"], (path, code, data)
    code, _, _ = await call(
        jp_fetch,
        "folders",
        "data",
        "files",
        "alice",
        "new.txt",
        method="PUT",
        body=b"x",
        headers=BOB,
    )
    assert code == 400
    assert os.listdir(folder(cluster, "alice", "private")) == ["s.txt"]
    code, _, _ = await call(jp_fetch, "folders", "data", "files", "..", "x", headers=BOB)
    assert code in (400, 404)


@jp_async
async def test_shared_folders_are_read_only(jp_fetch: Any, cluster: Any) -> None:
    shared = Path(cluster.engine.data_root) / ".shared" / "datasets"
    shared.mkdir(parents=True)
    (shared / "x.csv").write_text("1,2")
    files = ("folders", "datasets", "files")
    [entry] = (await ok_http(jp_fetch, *files, headers=BOB))["entries"]
    assert entry["name"] == "x.csv"
    code, _, response = await call(jp_fetch, *files, "x.csv", headers=BOB)
    assert (code, response.body) == (200, b"1,2")
    for method, path, body, params in (
        ("PUT", "y.csv", b"2", None),
        ("POST", "d", "", {"mkdir": "1"}),
        ("PATCH", "x.csv", {"to": "z.csv"}, None),
        ("DELETE", "x.csv", None, None),
    ):
        code, data, _ = await call(
            jp_fetch, *files, path, method=method, body=body, params=params, headers=BOB
        )
        assert code == 409 and "read-only" in data["message"], (method, code, data)
    assert os.listdir(shared) == ["x.csv"]


def rss() -> int:
    with open("/proc/self/status") as status:
        line = next(x for x in status if x.startswith("VmRSS:"))
    return int(line.split()[1]) * 1024


@jp_async
async def test_a_large_upload_streams_to_disk(jp_fetch: Any, cluster: Any) -> None:
    """50 MB in 1 MB chunks: the server (this process) grows far less than the file."""
    assert getattr(FolderFilesHandler, "_stream_request_body", False)  # bodies never buffered
    await ok_http(jp_fetch, "folders", method="POST", body={"name": "big"}, headers=ALICE)
    size, chunk = 50 * 1024 * 1024, b"\x5a" * (1024 * 1024)
    peak = [rss()]
    base = peak[0]

    async def body(write: Callable[[bytes], Any]) -> None:
        for _ in range(size // len(chunk)):
            await write(chunk)
            peak.append(rss())

    response = await jp_fetch(
        *API_SEGMENTS,
        "folders",
        "big",
        "files",
        "blob.bin",
        method="PUT",
        body_producer=body,
        headers={**ALICE, "Content-Length": str(size)},
        request_timeout=300,
    )
    assert response.code == 201
    assert (folder(cluster, "alice", "big") / "blob.bin").stat().st_size == size
    growth = max(peak) - base
    print(f"RSS growth during a {size >> 20} MB upload: {growth >> 20} MB")
    assert growth < size // 5, growth
    got = await jp_fetch(*API_SEGMENTS, "folders", "big", "files", "blob.bin", headers=ALICE)
    assert len(got.body) == size
    await asyncio.sleep(0)


async def cli(env: dict[str, str], *args: str) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "jupyter_cluster.cli",
        *args,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 120)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


@jp_async
async def test_the_cli_of_a_team_reaches_files_through_the_service(
    http_server: Any,  # serve the test server on jp_http_port
    jp_http_port: int,
    jp_base_url: str,
    jp_config_dir: Path,
    tmp_path: Path,
    cluster: Any,
) -> None:
    """``folder ls``/``cp`` with a service configured: as the token's user, over REST."""
    (jp_config_dir / "jupyter_cluster_config.json").write_text(
        json.dumps({"ClusterManager": {"service_allow_http": True}})
    )
    env = {
        **os.environ,
        "JUPYTER_CLUSTER_SERVICE_URL": f"http://127.0.0.1:{jp_http_port}{jp_base_url}",
        "JUPYTERHUB_API_TOKEN": "alice-token",
    }
    local = tmp_path / "in.bin"
    local.write_bytes(os.urandom(2 * 1024 * 1024 + 3))
    assert (await cli(env, "folder", "create", "data"))[0] == 0
    code, out, err = await cli(env, "folder", "cp", str(local), "data:")
    assert code == 0, err
    on_disk = folder(cluster, "alice", "data") / "in.bin"
    assert on_disk.read_bytes() == local.read_bytes()  # Alice's folder on the service
    code, out, err = await cli(env, "folder", "ls", "data", "--json")
    assert code == 0, err
    assert [(e["name"], e["size"]) for e in json.loads(out)] == [("in.bin", local.stat().st_size)]
    code, out, err = await cli(env, "folder", "cp", "data:in.bin", str(tmp_path / "back.bin"))
    assert code == 0, err
    assert (tmp_path / "back.bin").read_bytes() == local.read_bytes()
    code, out, err = await cli(env, "folder", "cp", "data:nothing", str(tmp_path))
    assert code != 0 and "no file or directory" in err and "Traceback" not in err
    bob = {**env, "JUPYTERHUB_API_TOKEN": "bob-token"}
    code, out, err = await cli(bob, "folder", "ls", "data")
    assert code != 0 and "no data folder" in err, err
