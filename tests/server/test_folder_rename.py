"""Renaming a data folder over REST: ``PATCH folders/{name}`` ``{"name": NEW}``.

A real Jupyter server with the extension, several users (one per token, as on
the shared service of a team) and ``folders_per_owner``: Alice renames her folder
and its files follow; Bob, with a folder of the same name, keeps his and cannot
rename hers (404); bad and taken names, the shared folder and a folder her
running session mounts are refused with nothing changed; the audit log records
the rename with both names. Team mode's client (a user's own server or CLI)
renames through the same route, as its token's user.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from jupyter_cluster.client.remote_engine import RemoteEngine
from jupyter_cluster.errors import Conflict, InvalidRequest, NotFound
from tests.support.constants import SMALL_BODY

from .support import call, jp_async, ok_http, wait_status
from .test_owners import ALICE, BOB, CAROL, TokenUsers

pytestmark = pytest.mark.docker


@pytest.fixture
def cluster_config() -> dict[str, Any]:
    return {
        "ServerApp": {"identity_provider_class": TokenUsers},
        "ClusterApp": {"admin_users": ["carol"]},
        "ClusterManager": {"folders_per_owner": True, "shared_folders": ["datasets"]},
    }


def owner_root(cluster: Any, owner: str) -> Path:
    return Path(cluster.engine.data_root) / ".owners" / owner


async def names(jp_fetch: Any, who: dict[str, str]) -> list[str]:
    return [f["name"] for f in await ok_http(jp_fetch, "folders", headers=who)]


@jp_async
async def test_a_rename_moves_the_folder_and_its_files_for_its_owner_only(
    jp_fetch: Any, cluster: Any
) -> None:
    for who in (ALICE, BOB):
        await ok_http(jp_fetch, "folders", method="POST", body={"name": "data"}, headers=who)
    await ok_http(
        jp_fetch, "folders", "data", "files", "a.txt", method="PUT", body=b"alice's", headers=ALICE
    )
    code, info, response = await call(
        jp_fetch, "folders", "data", method="PATCH", body={"name": "results"}, headers=ALICE
    )
    assert code == 200, info
    assert (info["name"], info["shared"]) == ("results", False)
    assert Path(info["path"]) == owner_root(cluster, "alice") / "results"
    assert response.headers["Location"].endswith("/folders/results")
    assert (owner_root(cluster, "alice") / "results" / "a.txt").read_bytes() == b"alice's"
    assert not (owner_root(cluster, "alice") / "data").exists()
    listed = await ok_http(jp_fetch, "folders", "results", "files", headers=ALICE)
    assert [e["name"] for e in listed["entries"]] == ["a.txt"]
    assert await names(jp_fetch, ALICE) == ["results"]

    # Bob's folder of the same old name is his and stays; Alice's is not his to rename
    assert await names(jp_fetch, BOB) == ["data"]
    code, _, _ = await call(
        jp_fetch, "folders", "results", method="PATCH", body={"name": "mine"}, headers=BOB
    )
    assert code == 404
    await ok_http(jp_fetch, "folders", "data", method="PATCH", body={"name": "b2"}, headers=BOB)
    assert await names(jp_fetch, BOB) == ["b2"]
    assert await names(jp_fetch, ALICE) == ["results"]

    # the audit log keeps both names, for the admin
    for _ in range(100):
        records = await ok_http(
            jp_fetch, "audit", params={"action": "folder_rename"}, headers=CAROL
        )
        if len(records) == 2:
            break
        await asyncio.sleep(0.1)
    assert [(r["actor"], r["target_owner"], r["details"]) for r in records] == [
        ("alice", "alice", {"folder": "data", "to": "results"}),
        ("bob", "bob", {"folder": "data", "to": "b2"}),
    ]


@jp_async
async def test_bad_taken_shared_and_mounted_folders_are_refused(
    jp_fetch: Any, cluster: Any
) -> None:
    (Path(cluster.engine.data_root) / ".shared" / "datasets").mkdir(parents=True)
    for name in ("data", "other"):
        await ok_http(jp_fetch, "folders", method="POST", body={"name": name}, headers=ALICE)

    async def refused(name: str, body: Any) -> tuple[int, dict[str, Any]]:
        code, data, _ = await call(
            jp_fetch, "folders", name, method="PATCH", body=body, headers=ALICE
        )
        return code, data

    for body in ({"name": "../x"}, {"name": "a/b"}, {"name": ".hidden"}, {}, {"name": 3}):
        code, data = await refused("data", body)
        assert (code, data["field"]) == (400, "name"), (body, data)
    code, data = await refused("data", {"name": "other"})
    assert code == 409 and "already exists" in data["message"]
    code, data = await refused("data", {"name": "datasets"})
    assert code == 409 and "shared folder" in data["message"]
    code, data = await refused("datasets", {"name": "mine"})
    assert code == 409 and "shared folder" in data["message"]
    code, _ = await refused("nothing", {"name": "x"})
    assert code == 404

    body = {**SMALL_BODY, "size": 1, "mounts": ["data"]}
    session = await ok_http(jp_fetch, "sessions", method="POST", body=body, headers=ALICE)
    try:
        await wait_status(jp_fetch, session["id"], "RUNNING", headers=ALICE)
        code, data = await refused("data", {"name": "moved"})
        assert code == 409, data
        assert session["name"] in data["message"] and "terminate" in data["message"]
    finally:
        await ok_http(jp_fetch, "sessions", session["id"], method="DELETE", headers=ALICE)
        await wait_status(jp_fetch, session["id"], "TERMINATED", headers=ALICE)
    await ok_http(
        jp_fetch, "folders", "data", method="PATCH", body={"name": "moved"}, headers=ALICE
    )
    assert await names(jp_fetch, ALICE) == ["datasets", "moved", "other"]


@jp_async
async def test_team_modes_client_renames_through_the_service(
    http_server: Any, jp_http_port: int, jp_base_url: str, cluster: Any
) -> None:
    """A user's own server (or CLI) in team mode: RemoteEngine.rename_folder is the
    service's PATCH, acting on the token's user's folder only."""
    url = f"http://127.0.0.1:{jp_http_port}{jp_base_url}"
    alice = RemoteEngine(url, "alice-token", allow_http=True)
    bob = RemoteEngine(url, "bob-token", allow_http=True)
    try:
        await alice.create_folder("data")
        info = await alice.rename_folder("data", "results", owner="ignored")
        assert (info.name, info.shared) == ("results", False)
        assert (owner_root(cluster, "alice") / "results").is_dir()
        assert [f.name for f in await alice.list_folders()] == ["results"]
        with pytest.raises(NotFound):
            await bob.rename_folder("results", "mine")
        await alice.create_folder("other")
        with pytest.raises(Conflict, match="already exists"):
            await alice.rename_folder("results", "other")
        with pytest.raises(InvalidRequest):
            await alice.rename_folder("results", "../x")
        assert not (owner_root(cluster, "bob") / "mine").exists()
    finally:
        await alice.close()
        await bob.close()
