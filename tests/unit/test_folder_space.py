"""Each owner's data folders are theirs; shared folders are seen by all and read-only.

Pure filesystem behaviour of :class:`~jupyter_cluster.engine.folder_space.FolderSpace`
(no Docker): what the shared service of a team relies on to keep one user from
mounting, listing or deleting another's data (security review A2/A3).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from jupyter_cluster.core.resources import Mount
from jupyter_cluster.engine.folder_space import FolderSpace, owner_dir
from jupyter_cluster.errors import Conflict, InvalidRequest, NotFound


def space(root: Path, owner: str, per_owner: bool = True) -> FolderSpace:
    return FolderSpace(str(root), owner, per_owner=per_owner, shared=["datasets"])


def test_owners_keep_their_folders_apart(tmp_path: Path) -> None:
    alice, bob = space(tmp_path, "alice"), space(tmp_path, "bob")
    alice.create("data")
    bob.create("data")  # the same name, another folder
    alice.create("private")
    (alice.path("private") / "secret.txt").write_text("alice's")
    assert alice.names() == ["data", "private"]
    assert bob.names() == ["data"]
    assert alice.path("data") != bob.path("data")
    with pytest.raises(NotFound):
        bob.path("private")
    with pytest.raises(NotFound):
        bob.remove("private")
    with pytest.raises(NotFound):
        bob.bind_mounts([Mount("private")], "/agent/root")
    assert (alice.path("private") / "secret.txt").read_text() == "alice's"


def test_shared_folders_are_seen_by_all_and_mounted_read_only(tmp_path: Path) -> None:
    (tmp_path / ".shared" / "datasets").mkdir(parents=True)
    (tmp_path / ".shared" / "unlisted").mkdir()  # not in shared_folders: nobody sees it
    alice = space(tmp_path, "alice")
    listed = alice.list()
    assert [(f.name, f.shared) for f in listed] == [("datasets", True)]
    [mount] = alice.bind_mounts([Mount("datasets", readonly=False)], "/agent/root")
    assert mount.source == "/agent/root/.shared/datasets"
    assert mount.target == "/home/work/datasets" and mount.readonly is True
    with pytest.raises(Conflict):
        alice.remove("datasets")
    with pytest.raises(Conflict):
        alice.create("datasets")
    with pytest.raises(NotFound):
        alice.path("unlisted")


def test_mounts_point_into_the_owners_own_directory_on_the_agent(tmp_path: Path) -> None:
    alice = space(tmp_path, "alice")
    alice.create("data")
    [mount] = alice.bind_mounts([Mount("data", readonly=True)], "/srv/agent-data")
    assert mount.source == "/srv/agent-data/.owners/alice/data" and mount.readonly


def test_single_user_mode_keeps_one_set_of_folders(tmp_path: Path) -> None:
    me = space(tmp_path, "me", per_owner=False)
    me.create("data")
    assert (tmp_path / "data").is_dir()
    assert space(tmp_path, "someone", per_owner=False).names() == ["data"]


@pytest.mark.parametrize("owner", ["", "..", "../root", "a/b", ".hidden", "x" * 200, "a\nb"])
def test_owner_names_that_cannot_be_a_directory_are_refused(owner: str) -> None:
    with pytest.raises(InvalidRequest):
        owner_dir(owner)


def test_a_folder_name_is_never_a_path(tmp_path: Path) -> None:
    alice = space(tmp_path, "alice")
    for name in ("../bob", ".owners", "a/b", ""):
        with pytest.raises(InvalidRequest):
            alice.create(name)
