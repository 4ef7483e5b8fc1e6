"""Text from outside never becomes a host path or a shell word unchecked (security
review I2, I3): a link in the data-folder root is neither listed nor mounted (Docker
would follow it to any host path), and a kernel id that is not a UUID is refused
before it goes into paths and scripts in main1."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest

from jupyter_cluster.core import naming
from jupyter_cluster.core.resources import Mount
from jupyter_cluster.engine.agents.fake import FakeAgent
from jupyter_cluster.engine.folders import DataFolders
from jupyter_cluster.errors import InvalidRequest
from jupyter_cluster.provisioning.process import RUN_DIR, KernelProcess


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
def test_any_kernel_id_gets_files_named_by_a_uuid(kernel_id: str) -> None:
    """jupyter_server accepts any id a client chooses; in main1 the kernel's files are
    named by a UUID derived from it, never by the id itself."""
    process = KernelProcess(FakeAgent("local"), "cid", kernel_id)
    token = naming.kernel_file_id(kernel_id)
    assert naming.is_uuid(token) and token != kernel_id
    assert process.connection_file == f"{RUN_DIR}/kernel-{token}.json"
    assert process.pid_file == f"{RUN_DIR}/kernel-{token}.pid"
    assert naming.kernel_file_id(kernel_id) == token  # the same files after a restart
    assert naming.kernel_file_id(kernel_id + "x") != token


def test_canonical_uuids_pass() -> None:
    kernel_id = "a0b1c2d3-0000-4000-8000-000000000000"
    assert naming.is_uuid(kernel_id)
    assert KernelProcess.connection_path(kernel_id).endswith(f"kernel-{kernel_id}.json")
    assert not naming.is_uuid(None) and not naming.is_uuid(kernel_id.upper())


def test_is_uuid_takes_only_what_uuid_writes() -> None:
    """is_uuid (a pattern, so the CLI need not import uuid) accepts exactly the
    canonical form ``str(uuid.UUID(...))`` gives: ids from labels and request bodies
    become paths only then."""
    import uuid

    canonical = [str(uuid.uuid4()) for _ in range(50)]
    assert all(naming.is_uuid(text) for text in canonical)
    odd = [
        canonical[0].upper(),  # uuid.UUID reads it, but writes lower case
        canonical[0].replace("-", ""),
        "{" + canonical[0] + "}",
        "urn:uuid:" + canonical[0],
        canonical[0] + "\n",
        " " + canonical[0],
        canonical[0][:-1] + "g",
        "../" + canonical[0][3:],
        None,
        42,
    ]
    for text in odd:
        assert not naming.is_uuid(text), text
        if isinstance(text, str):  # the rule it replaces, on the same input
            with contextlib.suppress(ValueError):
                assert str(uuid.UUID(text)) != text
    assert naming.kernel_file_id(canonical[1]) == canonical[1]
    derived = naming.kernel_file_id("my-kernel")
    assert naming.is_uuid(derived) and derived == naming.kernel_file_id("my-kernel")
