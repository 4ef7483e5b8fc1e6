"""Cluster kernelspecs read right in the launcher: they describe themselves, sit
together ("Cluster: …") and carry the extension's logo (#14 item 6)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from jupyter_client.kernelspec import KernelSpecManager

from jupyter_cluster.cli.main import main
from jupyter_cluster.core.models import LaunchSpec
from jupyter_cluster.provisioning import kernelspec


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"size": 4, "cpu": 1, "mem": "2g"}, "Cluster: 4 \u00d7 1 CPU, 2g"),
        (
            {"size": 2, "cpu": 0.5, "mem": "512m", "gpu": 1},
            "Cluster: 2 \u00d7 0.5 CPU, 512m, 1 GPU",
        ),
        ({"size": 8, "mode": "multi-node"}, "Cluster: 8 \u00d7 1 CPU, 1g (multi-node)"),
    ],
)
def test_a_kernelspec_names_its_shape(fields: dict[str, object], expected: str) -> None:
    assert kernelspec.display_name(LaunchSpec.create(image="img", **fields)) == expected  # type: ignore[arg-type]


def test_kernelspec_install_writes_the_description_and_the_logo(tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as done:
        main(
            ["kernelspec", "install", "c4", "--size", "4", "--mem", "2g", "--prefix", str(tmp_path)]
        )
    assert done.value.code == 0
    spec_dir = tmp_path / "share" / "jupyter" / "kernels" / "c4"
    assert json.loads((spec_dir / "kernel.json").read_text())["display_name"] == (
        "Cluster: 4 \u00d7 1 CPU, 2g"
    )
    # Jupyter serves a kernelspec's logo-svg.svg as its `logo-svg` resource (the launcher icon)
    ksm = KernelSpecManager(kernel_dirs=[os.fspath(spec_dir.parent)])
    found = Path(ksm.get_all_specs()["c4"]["resource_dir"])
    assert (found / "logo-svg.svg").read_bytes().startswith(b"<svg")


def test_a_kernelspec_offers_jupyterlabs_debugger(tmp_path: Path) -> None:
    """JupyterLab enables its debugger for a kernel whose kernelspec says
    ``metadata.debugger`` (as ipykernel's own does); the kernel in main1 is ipykernel."""
    with pytest.raises(SystemExit) as done:
        main(["kernelspec", "install", "c2", "--size", "2", "--prefix", str(tmp_path)])
    assert done.value.code == 0
    ksm = KernelSpecManager(kernel_dirs=[os.fspath(tmp_path / "share" / "jupyter" / "kernels")])
    spec = ksm.get_kernel_spec("c2")
    assert spec.metadata["debugger"] is True
    assert spec.metadata["kernel_provisioner"]["provisioner_name"] == "cluster-provisioner"
