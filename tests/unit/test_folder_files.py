"""Files inside data folders: paths are checked and links never lead out of a folder.

Pure filesystem behaviour of :mod:`jupyter_cluster.core.folder_paths` and
:class:`~jupyter_cluster.engine.folder_files.FolderFiles` (no Docker): what keeps
the shared service, running as root, from reading or writing outside the folder a
user names, whatever links the user (or a session) put inside it.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from jupyter_cluster.core.folder_paths import path_parts, split_ref
from jupyter_cluster.engine.folder_space import FolderSpace
from jupyter_cluster.errors import Conflict, InvalidRequest, NotFound


def space(root: Path, owner: str) -> FolderSpace:
    return FolderSpace(str(root), owner, per_owner=True, shared=["datasets"], work_uid=os.getuid())


@pytest.mark.parametrize(
    "bad", ["/etc/passwd", "../x", "a/../../b", "a/..", "a\0b", "x" * 256 + "/y", "a/" * 65]
)
def test_bad_paths_are_refused(bad: str) -> None:
    with pytest.raises(InvalidRequest) as err:
        path_parts(bad)
    assert err.value.field == "path"


def test_paths_and_refs_split() -> None:
    assert path_parts("") == path_parts("/") == ()
    assert path_parts("a//b/./c/") == ("a", "b", "c")
    assert split_ref("data") == ("data", ())
    assert split_ref("data/sub/f.txt") == ("data", ("sub", "f.txt"))
    assert split_ref("data:sub/f.txt") == ("data", ("sub", "f.txt"))
    with pytest.raises(InvalidRequest):
        split_ref("../etc")


def test_list_write_read_mkdir_rename_delete(tmp_path: Path) -> None:
    alice = space(tmp_path, "alice")
    alice.create("data")
    files = alice.files("data")
    files.mkdir(("sub",))
    upload = files.writer(("sub", "a.txt"))
    upload.write(b"hello ")
    upload.write(b"world")
    assert files.list(("sub",)) == []  # nothing shows until the upload commits
    assert upload.commit() == 11
    [entry] = files.list(("sub",))
    assert (entry["name"], entry["type"], entry["size"]) == ("a.txt", "file", 11)
    assert b"".join(files.read(("sub", "a.txt"), chunk=4)) == b"hello world"
    assert files.info(("sub",))["type"] == "directory"
    files.rename(("sub", "a.txt"), ("b.txt",))
    assert (alice.path("data") / "b.txt").read_bytes() == b"hello world"
    with pytest.raises(Conflict):
        files.rename(("b.txt",), ("sub",))  # never over an existing entry
    files.writer(("sub", "c")).commit()
    with pytest.raises(Conflict, match="recursive"):
        files.delete(("sub",))
    files.delete(("sub",), recursive=True)
    files.delete(("b.txt",))
    assert files.list(()) == []
    with pytest.raises(NotFound):
        files.read(("nothing",))
    with pytest.raises(InvalidRequest):
        files.delete(())  # the folder itself is `folder rm`


def test_an_aborted_upload_leaves_nothing(tmp_path: Path) -> None:
    alice = space(tmp_path, "alice")
    alice.create("data")
    (alice.path("data") / "keep.txt").write_text("old")
    upload = alice.files("data").writer(("keep.txt",))
    upload.write(b"partial")
    upload.abort()
    assert sorted(os.listdir(alice.path("data"))) == ["keep.txt"]
    assert (alice.path("data") / "keep.txt").read_text() == "old"


def test_links_out_of_the_folder_are_never_followed(tmp_path: Path) -> None:
    alice, bob = space(tmp_path, "alice"), space(tmp_path, "bob")
    alice.create("data")
    bob.create("private")
    (bob.path("private") / "secret.txt").write_text("bob's")
    top = alice.path("data")
    os.symlink("/etc", top / "etc")
    os.symlink(bob.path("private"), top / "bobs")
    os.symlink(bob.path("private") / "secret.txt", top / "secret.txt")
    files = alice.files("data")
    for parts in (("etc",), ("bobs",)):
        with pytest.raises(InvalidRequest, match="link"):
            files.list(parts)
    with pytest.raises(InvalidRequest, match="link"):
        files.read(("etc", "passwd"))
    with pytest.raises(InvalidRequest, match="link"):
        files.read(("secret.txt",))
    with pytest.raises(InvalidRequest, match="link"):
        files.writer(("bobs", "planted.txt"))
    with pytest.raises(InvalidRequest, match="link"):
        files.mkdir(("bobs", "new"))
    with pytest.raises(InvalidRequest, match="link"):
        files.rename(("bobs", "secret.txt"), ("stolen.txt",))
    with pytest.raises(InvalidRequest, match="link"):
        files.delete(("bobs", "secret.txt"))
    # a link is listed as one, and deleting it removes the link only
    kinds = {e["name"]: e["type"] for e in files.list(())}
    assert kinds == {"bobs": "link", "etc": "link", "secret.txt": "link"}
    files.delete(("secret.txt",))
    files.delete(("bobs",), recursive=True)
    files.mkdir(("d",))
    os.symlink(bob.path("private"), top / "d" / "bobs")
    files.delete(("d",), recursive=True)  # the link inside goes, not what it points at
    assert not (top / "d").exists()
    assert (bob.path("private") / "secret.txt").read_text() == "bob's"
    # writing over a link replaces the link, never the file it points at
    os.symlink(bob.path("private") / "secret.txt", top / "over.txt")
    upload = files.writer(("over.txt",))
    upload.write(b"mine")
    upload.commit()
    assert not (top / "over.txt").is_symlink()
    assert (bob.path("private") / "secret.txt").read_text() == "bob's"


def test_a_link_swapped_in_during_an_upload_is_not_followed(tmp_path: Path) -> None:
    alice = space(tmp_path, "alice")
    alice.create("data")
    outside = tmp_path / "outside"
    outside.mkdir()
    files = alice.files("data")
    files.mkdir(("sub",))
    upload = files.writer(("sub", "f.txt"))
    upload.write(b"data")
    top = alice.path("data")
    os.rename(top / "sub", top / "moved")  # swap a link to elsewhere in its place
    os.symlink(outside, top / "sub")
    upload.commit()
    assert os.listdir(outside) == []
    assert (top / "moved" / "f.txt").read_bytes() == b"data"


def test_shared_folders_are_read_only(tmp_path: Path) -> None:
    shared = tmp_path / ".shared" / "datasets"
    shared.mkdir(parents=True)
    (shared / "x.csv").write_text("1,2")
    files = space(tmp_path, "alice").files("datasets")
    assert [e["name"] for e in files.list(())] == ["x.csv"]
    assert b"".join(files.read(("x.csv",))) == b"1,2"
    for act in (
        lambda: files.writer(("y",)),
        lambda: files.mkdir(("d",)),
        lambda: files.rename(("x.csv",), ("y.csv",)),
        lambda: files.delete(("x.csv",)),
    ):
        with pytest.raises(Conflict, match="read-only"):
            act()
    assert os.listdir(shared) == ["x.csv"]
