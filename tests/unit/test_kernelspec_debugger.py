"""A cluster kernelspec written before kernelspecs said ``debugger`` is served with it
(the Lab then offers its debugger); other kernelspecs, and one that says false, are
served as written, and no kernel.json is changed."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from jupyter_client.kernelspec import KernelSpecManager

from jupyter_cluster.server.kernelspec_debugger import lacks_debugger, offer_debugger

CLUSTER = {"kernel_provisioner": {"provisioner_name": "cluster-provisioner", "config": {}}}
LOCAL = {"kernel_provisioner": {"provisioner_name": "local-provisioner"}}
ARGV = ["python3", "-m", "ipykernel_launcher", "-f", "{connection_file}"]


def write_spec(kernels: Path, name: str, metadata: dict[str, Any]) -> Path:
    """A kernel.json under ``kernels/name`` with ``metadata``; its path."""
    (kernels / name).mkdir(parents=True)
    path = kernels / name / "kernel.json"
    spec = {"argv": ARGV, "display_name": name, "language": "python", "metadata": metadata}
    path.write_text(json.dumps(spec))
    return path


def manager(tmp_path: Path) -> tuple[KernelSpecManager, dict[str, Path]]:
    """A kernelspec manager that sees only four specs: an old cluster one (no
    ``debugger``), a cluster one that says false, a plain one and one of
    another provisioner."""
    kernels = tmp_path / "kernels"
    files = {
        "old-cluster": write_spec(kernels, "old-cluster", dict(CLUSTER)),
        "cluster-off": write_spec(kernels, "cluster-off", {**CLUSTER, "debugger": False}),
        "plain": write_spec(kernels, "plain", {}),
        "other-provisioner": write_spec(kernels, "other-provisioner", LOCAL),
    }
    ksm = KernelSpecManager(kernel_dirs=[str(kernels)], ensure_native_kernel=False)
    return ksm, files


def debugger_of(metadata: dict[str, Any]) -> Any:
    return metadata.get("debugger", "absent")


def test_only_an_old_cluster_spec_lacks_the_debugger() -> None:
    assert lacks_debugger(dict(CLUSTER))
    assert not lacks_debugger({**CLUSTER, "debugger": False})
    assert not lacks_debugger({**CLUSTER, "debugger": True})
    assert not lacks_debugger({})
    assert not lacks_debugger({"kernel_provisioner": "cluster-provisioner"})
    assert not lacks_debugger(None)


def test_the_server_serves_an_old_cluster_spec_with_the_debugger(tmp_path: Path) -> None:
    ksm, files = manager(tmp_path)
    before = {name: path.read_bytes() for name, path in files.items()}
    assert debugger_of(ksm.get_kernel_spec("old-cluster").metadata) == "absent"
    offer_debugger(ksm)
    offer_debugger(ksm)  # the extension loaded twice wraps once

    every = ksm.get_all_specs()
    served = {name: debugger_of(every[name]["spec"]["metadata"]) for name in files}
    assert served == {
        "old-cluster": True,
        "cluster-off": False,
        "plain": "absent",
        "other-provisioner": "absent",
    }
    one = {name: debugger_of(ksm.get_kernel_spec(name).metadata) for name in files}
    assert one == served
    # The provisioner still finds its configuration in the served spec.
    assert (
        every["old-cluster"]["spec"]["metadata"]["kernel_provisioner"]
        == (CLUSTER["kernel_provisioner"])
    )
    assert {name: path.read_bytes() for name, path in files.items()} == before


def test_an_async_manager_is_answered_asynchronously(tmp_path: Path) -> None:
    """A kernelspec manager whose readers are coroutines (a gateway's) gets coroutines."""
    ksm, _ = manager(tmp_path)

    class Async:
        async def get_kernel_spec(self, name: str) -> Any:
            return ksm.get_kernel_spec(name)

        async def get_all_specs(self) -> Any:
            return ksm.get_all_specs()

    remote = Async()
    offer_debugger(remote)
    every = asyncio.run(remote.get_all_specs())
    assert every["old-cluster"]["spec"]["metadata"]["debugger"] is True
    assert "debugger" not in every["plain"]["spec"]["metadata"]
    spec = asyncio.run(remote.get_kernel_spec("old-cluster"))
    assert spec.metadata["debugger"] is True
