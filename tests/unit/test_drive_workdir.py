"""A notebook in Lab's data-folders drive (core.drive_workdir): which data folder its
new session mounts and where its kernel starts, in a new or a running session; and
the server's kernel-manager wrapper that hands the drive path to cluster kernels
only (server.drive_kernels)."""

from __future__ import annotations

import asyncio
import os
from types import SimpleNamespace
from typing import Any

import pytest

from jupyter_cluster.core.drive_workdir import drive_path, map_drive_cwd, plan_drive_workdir
from jupyter_cluster.core.folders import FolderInfo
from jupyter_cluster.provisioning.workdir import DRIVE_KWARG, NotebookDir
from jupyter_cluster.server.drive_kernels import route_drive_paths
from jupyter_cluster.server.notebook_dir import host_root_to_mount

FOLDERS = {"proj": False, "common": True}  # name -> shared


def test_only_paths_in_the_drive_are_drive_paths() -> None:
    assert drive_path("ClusterFolders:proj/sub") == "proj/sub"
    assert drive_path("/ClusterFolders:proj") == "proj"
    assert drive_path("ClusterFolders:") == ""
    assert drive_path("proj/sub") is None
    assert drive_path("Other:proj") is None
    assert drive_path("x/ClusterFolders:proj") is None
    assert drive_path(None) is None


def test_a_new_session_mounts_the_notebooks_folder_and_starts_in_it() -> None:
    plan = plan_drive_workdir("proj/sub/deeper", FOLDERS, [])
    assert (plan.host_root, plan.cwd, plan.note, plan.mount) == (
        None,
        "/home/work/proj/sub/deeper",
        "",
        "proj",
    )
    top = plan_drive_workdir("proj", FOLDERS, [])
    assert (top.cwd, top.mount, top.note) == ("/home/work/proj", "proj", "")


def test_a_shared_folder_is_mounted_read_only() -> None:
    plan = plan_drive_workdir("common/a", FOLDERS, [])
    assert (plan.cwd, plan.mount, plan.note) == ("/home/work/common/a", "common:ro", "")


def test_a_folder_the_launch_already_mounts_is_not_mounted_twice() -> None:
    for given in (["proj"], ["proj:ro"], ["other", "proj:rw"]):
        plan = plan_drive_workdir("proj/sub", FOLDERS, given)
        assert (plan.cwd, plan.mount, plan.note) == ("/home/work/proj/sub", "", "")


@pytest.mark.parametrize(
    ("relative", "said"),
    [
        ("../x", "leaves its data folder"),
        ("proj/../../etc", "leaves its data folder"),
        ("proj/./a", "leaves its data folder"),
        ("", "at the top of the data-folders drive"),
        ("-bad name", "is not a data folder's name"),
        ("someone-elses", "neither one of yours nor a shared one"),
    ],
)
def test_a_bad_or_foreign_path_mounts_nothing_and_says_why(relative: str, said: str) -> None:
    plan = plan_drive_workdir(relative, FOLDERS, [])
    assert (plan.host_root, plan.cwd, plan.mount) == (None, "/home/work", "")
    assert said in plan.note and plan.note.endswith("relative paths are in /home/work")


def test_a_running_session_starts_there_only_if_it_mounts_the_folder() -> None:
    there = map_drive_cwd("proj/sub", ["proj"])
    assert (there.cwd, there.note, there.mount) == ("/home/work/proj/sub", "", "")
    away = map_drive_cwd("proj/sub", ["other"])
    assert (away.cwd, away.mount) == ("/home/work", "")
    assert "does not mount the notebook's data folder 'proj'" in away.note
    assert "--mount proj" in away.note
    bad = map_drive_cwd("proj/../other", ["proj", "other"])
    assert bad.cwd == "/home/work" and "leaves its data folder" in bad.note


class FakeEngine:
    """list_folders as the engine answers it."""

    async def list_folders(self, owner: str = "") -> list[FolderInfo]:
        return [FolderInfo("proj", "/d/proj"), FolderInfo("common", "/d/.shared/c", shared=True)]


def test_the_provisioner_asks_the_engine_for_the_owners_folders() -> None:
    dirs = NotebookDir()
    plan = asyncio.run(dirs.drive_workdir(FakeEngine(), "common/x", None))
    assert (plan.cwd, plan.mount) == ("/home/work/common/x", "common:ro")
    session: Any = SimpleNamespace(spec=SimpleNamespace(mounts=[SimpleNamespace(name="proj")]))
    plan = asyncio.run(dirs.drive_workdir(FakeEngine(), "proj", session))
    assert (plan.cwd, plan.mount) == ("/home/work/proj", "")


class FakeKernelManager:
    """start_kernel records its arguments; two kernelspecs, one a cluster one."""

    default_kernel_name = "python3"

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []
        specs = {
            "python3": SimpleNamespace(metadata={}),
            "cluster": SimpleNamespace(
                metadata={"kernel_provisioner": {"provisioner_name": "cluster-provisioner"}}
            ),
        }
        self.kernel_spec_manager = SimpleNamespace(get_kernel_spec=lambda name: specs[name])

    async def start_kernel(self, **kwargs: Any) -> str:
        self.calls.append(kwargs)
        return "kid"


def test_the_drive_path_reaches_cluster_kernels_only() -> None:
    km = FakeKernelManager()
    route_drive_paths(km)
    route_drive_paths(km)  # wrapping twice wraps once

    async def starts() -> None:
        assert await km.start_kernel(kernel_name="cluster", path="ClusterFolders:p/s") == "kid"
        await km.start_kernel(kernel_name="python3", path="ClusterFolders:p/s")
        await km.start_kernel(path="ClusterFolders:p/s")  # the default: python3
        await km.start_kernel(kernel_name="cluster", path="p/s")
        await km.start_kernel(kernel_name="nosuch", path="ClusterFolders:p/s")

    asyncio.run(starts())
    assert km.calls == [
        {"kernel_name": "cluster", "path": "ClusterFolders:p/s", DRIVE_KWARG: "p/s"},
        {"kernel_name": "python3", "path": "ClusterFolders:p/s"},
        {"path": "ClusterFolders:p/s"},
        {"kernel_name": "cluster", "path": "p/s"},
        {"kernel_name": "nosuch", "path": "ClusterFolders:p/s"},
    ]


def test_a_launch_for_a_drive_folder_never_mounts_the_servers_folder(tmp_path: Any) -> None:
    """The REST launch's ``notebook_dir`` in the drive: no server folder is mounted,
    where the same launch for a folder of the (owned) root mounts the root."""
    owner = os.stat(tmp_path).st_uid
    engine = SimpleNamespace(host_folder_mount=lambda: ("", owner))
    assert host_root_to_mount(engine, str(tmp_path), "", True) == str(tmp_path.resolve())
    assert host_root_to_mount(engine, str(tmp_path), "ClusterFolders:proj", True) is None
