"""Text from outside never becomes a host path or a shell word unchecked (security
review I2, I3): a link in the data-folder root is neither listed nor mounted (Docker
would follow it to any host path), and a kernel id that is not a UUID is refused
before it goes into paths and scripts in main1."""

from __future__ import annotations

from pathlib import Path

import pytest

from jupyter_cluster.core import naming
from jupyter_cluster.core.resources import Mount
from jupyter_cluster.engine.folders import DataFolders
from jupyter_cluster.errors import ClusterError, InvalidRequest
from jupyter_cluster.provisioning.process import KernelProcess


def test_a_link_in_the_data_folder_root_is_not_a_folder(tmp_path: Path) -> None:
    folders = DataFolders(str(tmp_path / "root"))
    folders.create("data")
    (tmp_path / "root" / "docker").symlink_to("/var/run")
    assert [f.name for f in folders.list()] == ["data"]
    with pytest.raises(InvalidRequest, match="'docker' is a link, not a folder"):
        folders.bind_mounts([Mount("docker", False)], "/agent/root")
    with pytest.raises(InvalidRequest, match="is a link"):
        folders.remove("docker")
    assert Path("/var/run").is_dir()  # untouched
    [mount] = folders.bind_mounts([Mount("data", True)], "/agent/root")
    assert mount.source == "/agent/root/data" and mount.readonly


@pytest.mark.parametrize(
    "kernel_id",
    ['x"; rm -rf ~; "', "../../etc/passwd", "", "0" * 36, "A0B1C2D3-0000-4000-8000-000000000000"],
)
def test_a_kernel_id_must_be_a_uuid(kernel_id: str) -> None:
    with pytest.raises(ClusterError, match="must be a UUID"):
        KernelProcess.connection_path(kernel_id)


def test_canonical_uuids_pass() -> None:
    kernel_id = "a0b1c2d3-0000-4000-8000-000000000000"
    assert naming.is_uuid(kernel_id)
    assert KernelProcess.connection_path(kernel_id).endswith(f"kernel-{kernel_id}.json")
    assert not naming.is_uuid(None) and not naming.is_uuid(kernel_id.upper())
