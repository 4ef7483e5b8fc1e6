"""The files of data folders in team mode, through users' own servers, and attacks on them.

On the real Hub, alice reaches her data folder's files the way her Lab does: through
HER OWN single-user server's ``cluster/api/folders/{name}/files/{path}`` routes, which
forward to the shared service with her server's token. She uploads (streamed, in
chunks), lists, downloads (bytes round-trip), makes a directory, renames and deletes.
The files land in her folder on the service's disk as the containers' ``work`` user
(the same uid as a file her session writes there), never as root. A large file goes
up and comes back down with neither her server nor the service holding it in memory.

Then the attacks, each from a real Unix user or that user's own server:

- bob, through his own server and directly against the service with his server's
  token, cannot list, read, write, rename or delete alice's files, nor rename her folder (404: it is
  not even said to exist for him); a folder of his of the same name is his own;
  through alice's server his token is refused (403); his CLI cannot copy hers out.
- alice plants links in her folder from inside her own session (``ln -s /etc``), as
  the work user in a container can: the service, which runs as root, refuses to read
  or write through them, whether asked through her server or directly, and a path
  with ``..`` is refused before it reaches the disk.
"""

from __future__ import annotations

import hashlib
import json
import os
import pwd
import secrets
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.constants import API, SMALL_FLAGS

from .launch import service_store
from .support import Hub, end_sessions, ok
from .test_team_lifecycle import service_pid

pytestmark = pytest.mark.docker

CLI = "jupyter-cluster"
FOLDER = "att-files"
CHUNK = 256 * 1024


def files(*path: str) -> str:
    """The route of ``path`` in :data:`FOLDER`, relative to a server's base URL."""
    return "/".join((API, "folders", FOLDER, "files", *path))


def on_disk(hub: Hub, owner: str, *path: str) -> Path:
    """Where the service keeps ``path`` of ``owner``'s :data:`FOLDER`, found on its disk."""
    found = [
        p
        for p in (service_store(hub.state) / "folders").rglob(FOLDER)
        if p.parent.name == owner and p.is_dir()
    ]
    assert len(found) == 1, found
    return found[0].joinpath(*path)


def chunks(data: bytes) -> Iterator[bytes]:
    """``data`` as a streamed (chunked) request body."""
    for at in range(0, len(data), CHUNK):
        yield data[at : at + CHUNK]


def test_alice_uses_her_folder_files_through_her_own_server(hub: Hub, team: dict[str, str]) -> None:
    alice, bob = team["alice"], team["bob"]
    bob_server = hub.server_token("bob")
    blob = os.urandom(3 * 1024 * 1024 + 5)
    ok(hub.server_call("alice", "POST", f"{API}/folders", alice, json={"name": FOLDER}), 201)
    try:
        # -- alice's own files, through her own server ------------------------------------
        assert ok(hub.server_call("alice", "GET", files(), alice)).json()["entries"] == []
        put = hub.server_call("alice", "PUT", files("in.bin"), alice, data=chunks(blob))
        assert ok(put, 201).json() == {"name": FOLDER, "path": "in.bin", "size": len(blob)}
        ok(hub.server_call("alice", "POST", files("sub"), alice, params={"mkdir": "1"}), 201)
        small = hub.server_call("alice", "PUT", files("sub", "a b.txt"), alice, data=b"hi")
        ok(small, 201)
        [entry, sub] = ok(hub.server_call("alice", "GET", files(), alice)).json()["entries"]
        assert (entry["name"], entry["type"], entry["size"]) == ("in.bin", "file", len(blob))
        assert (sub["name"], sub["type"]) == ("sub", "directory")
        got = hub.server_call("alice", "GET", files("in.bin"), alice, params={"download": "1"})
        assert ok(got).content == blob
        assert "attachment" in got.headers["Content-Disposition"]
        moved = {"to": "sub/moved.bin"}
        ok(hub.server_call("alice", "PATCH", files("in.bin"), alice, json=moved))
        stored = on_disk(hub, "alice", "sub", "moved.bin")
        assert stored.read_bytes() == blob
        # Written by the service as the containers' work user, not as root nor as alice.
        owner = stored.stat().st_uid
        assert owner not in (0, pwd.getpwnam("alice").pw_uid), owner
        assert stored.parent.stat().st_uid == owner
        assert not [p for p in stored.parent.iterdir() if p.name.startswith(".upload-")]

        # -- bob, through his own server and directly: alice's files are not there ---------
        for method, path, kw in (
            ("GET", files(), {}),
            ("GET", files("sub", "moved.bin"), {}),
            ("PUT", files("sub", "planted.bin"), {"data": b"bob was here"}),
            ("POST", files("sub", "bobs"), {"params": {"mkdir": "1"}}),
            ("PATCH", files("sub", "moved.bin"), {"json": {"to": "stolen.bin"}}),
            ("DELETE", files("sub", "moved.bin"), {"params": {"recursive": "1"}}),
            ("DELETE", files("sub"), {"params": {"recursive": "1"}}),
            ("PATCH", f"{API}/folders/{FOLDER}", {"json": {"name": "stolen"}}),
        ):
            through_his = hub.server_call("bob", method, path, bob, **kw)
            assert through_his.status_code == 404, (method, path, through_his.text)
            direct = hub.service_call(method, path, bob_server, **kw)
            assert direct.status_code == 404, (method, path, direct.text)
            at_hers = hub.server_call("alice", method, path, bob, **kw)
            assert at_hers.status_code == 403, (method, path, at_hers.status_code)
        done = hub.run_as("bob", [CLI, "folder", "cp", f"{FOLDER}:sub/moved.bin", "/tmp/"])
        assert done.returncode != 0 and "no data folder" in done.stderr, done
        # A folder of his of the same name is his own, and empty.
        ok(hub.server_call("bob", "POST", f"{API}/folders", bob, json={"name": FOLDER}), 201)
        try:
            assert ok(hub.server_call("bob", "GET", files(), bob)).json()["entries"] == []
            ok(hub.server_call("bob", "PUT", files("bobs.txt"), bob, data=b"mine"), 201)
            assert on_disk(hub, "bob", "bobs.txt").read_bytes() == b"mine"
        finally:
            ok(hub.server_call("bob", "DELETE", f"{API}/folders/{FOLDER}", bob), 204)
        assert sorted(p.name for p in on_disk(hub, "alice").iterdir()) == ["sub"]
        assert stored.read_bytes() == blob
        assert sorted(p.name for p in stored.parent.iterdir()) == ["a b.txt", "moved.bin"]

        # -- links alice plants from her own session, and '..' ----------------------------
        _plant_links(hub, owner)
        _links_and_dots_are_refused(hub, alice)

        # -- and she deletes what is hers ---------------------------------------------------
        ok(hub.server_call("alice", "DELETE", files("sub", "moved.bin"), alice), 204)
        ok(hub.server_call("alice", "DELETE", files("sub"), alice, params={"recursive": "1"}))
        assert not on_disk(hub, "alice", "sub").exists()
    finally:
        end_sessions(hub, "alice", alice)
        hub.server_call("alice", "DELETE", f"{API}/folders/{FOLDER}", alice)


def _plant_links(hub: Hub, work_uid: int) -> None:
    """As alice, from inside her own session mounting the folder: links to /etc."""
    done = hub.run_as("alice", [CLI, "launch", *SMALL_FLAGS, "--mount", FOLDER, "--json"])
    assert done.returncode == 0, done.stderr
    sid = json.loads(done.stdout)["id"]
    script = (
        f"cd /home/work/{FOLDER} && ln -s /etc escape && ln -s /etc/shadow shadow "
        "&& ln -s /etc sub/up && touch from-session"
    )
    done = hub.run_as("alice", [CLI, "exec", sid, "main1", "--", "sh", "-c", script])
    assert done.returncode == 0, done.stderr
    assert hub.run_as("alice", [CLI, "rm", sid]).returncode == 0
    top = on_disk(hub, "alice")
    assert (top / "escape").is_symlink() and (top / "shadow").is_symlink()
    # A file her session wrote has the uid the service gave her upload.
    assert (top / "from-session").stat().st_uid == work_uid


def _links_and_dots_are_refused(hub: Hub, alice: str) -> None:
    """Reads and writes through the planted links, and '..', answer 400; nothing
    outside her folder is read or changed."""
    alice_server = hub.server_token("alice")
    marker = f"planted-{secrets.token_hex(4)}"
    listed = ok(hub.server_call("alice", "GET", files(), alice)).json()["entries"]
    kinds = {e["name"]: e["type"] for e in listed}
    assert kinds["escape"] == kinds["shadow"] == "link"  # listed as links, not followed
    attempts = (
        ("GET", files("escape", "passwd"), {}),
        ("GET", files("escape"), {}),
        ("GET", files("shadow"), {}),
        ("GET", files("sub", "up", "hostname"), {}),
        ("PUT", files("escape", marker), {"data": b"x"}),
        ("PUT", files("sub", "up", marker), {"data": b"x"}),
        ("POST", files("escape", marker), {"params": {"mkdir": "1"}}),
        ("PATCH", files("sub", "a b.txt"), {"json": {"to": f"escape/{marker}"}}),
        ("DELETE", files("escape", "hostname"), {}),
        # '/' encoded, so that no proxy on the way resolves the '..' in the URL itself
        ("GET", files("%2F".join(("sub", "..", "..", "..", "etc", "passwd"))), {}),
        ("PUT", files("%2F".join(("sub", "..", "..", marker))), {"data": b"x"}),
        ("PATCH", files("sub", "a b.txt"), {"json": {"to": f"../../{marker}"}}),
    )
    for method, path, kw in attempts:
        for reply in (
            hub.server_call("alice", method, path, alice, **kw),
            hub.service_call(method, path, alice_server, **kw),
        ):
            assert reply.status_code == 400, (method, path, reply.status_code, reply.text)
            assert "root:" not in reply.text
            assert "link" in reply.text or "'..'" in reply.text, reply.text
    assert not [p for p in Path("/etc").iterdir() if p.name == marker]
    assert not list(service_store(hub.state).rglob(marker))
    assert Path("/etc/hostname").exists()
    assert (on_disk(hub, "alice", "sub") / "a b.txt").read_bytes() == b"hi"


class PeakRss:
    """The largest resident size of processes while a ``with`` block runs (sampled)."""

    def __init__(self, *pids: int) -> None:
        self.pids = pids
        self.base = {pid: rss(pid) for pid in pids}
        self.peak = dict(self.base)
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self.done.wait(0.05):
            for pid in self.pids:
                self.peak[pid] = max(self.peak[pid], rss(pid))

    def __enter__(self) -> PeakRss:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.done.set()
        self.thread.join()

    def growth(self, pid: int) -> int:
        return self.peak[pid] - self.base[pid]


def rss(pid: int) -> int:
    """The resident size of process ``pid`` in bytes."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no VmRSS for {pid}")


def test_a_large_file_streams_through_her_server_and_the_service(
    hub: Hub, team: dict[str, str]
) -> None:
    """64 MiB up and down through alice's server: neither process holds the file."""
    alice = team["alice"]
    size = 64 * 1024 * 1024
    piece = os.urandom(CHUNK)
    sent = hashlib.sha256(piece * (size // CHUNK)).hexdigest()
    server, service = hub.server_pid("alice"), service_pid(hub)
    assert server and service
    ok(hub.server_call("alice", "POST", f"{API}/folders", alice, json={"name": FOLDER}), 201)
    try:
        with PeakRss(server, service) as up:
            body = (piece for _ in range(size // CHUNK))
            put = hub.server_call("alice", "PUT", files("big.bin"), alice, data=body, timeout=600)
            assert ok(put, 201).json()["size"] == size
        assert on_disk(hub, "alice", "big.bin").stat().st_size == size
        with PeakRss(server, service) as down:
            got = hashlib.sha256()
            reply = hub.server_call("alice", "GET", files("big.bin"), alice, stream=True)
            for data in ok(reply).iter_content(CHUNK):
                got.update(data)
        assert got.hexdigest() == sent
        for what, seen in (("upload", up), ("download", down)):
            for pid, name in ((server, "her server"), (service, "the service")):
                growth = seen.growth(pid)
                print(f"{what}: {name} grew {growth >> 20} MiB for {size >> 20} MiB")
                assert growth < size // 4, (what, name, growth)
    finally:
        hub.server_call("alice", "DELETE", f"{API}/folders/{FOLDER}", alice)
