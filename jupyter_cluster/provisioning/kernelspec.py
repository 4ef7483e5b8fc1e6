"""Writing kernelspecs that start their kernel in main1 of a new cluster session.

``jupyter cluster kernelspec install NAME …`` calls :func:`install`; the launch
parameters go to ``metadata.kernel_provisioner.config``, which jupyter_client
hands to :class:`~jupyter_cluster.provisioning.provisioner.ClusterProvisioner` as traits.
"""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
from typing import Any

from jupyter_client.kernelspec import KernelSpecManager

from ..core.models import LaunchSpec
from ..core.units import format_size
from ..errors import InvalidRequest

PROVISIONER_NAME = "cluster-provisioner"
KERNEL_ARGV = ["python3", "-m", "ipykernel_launcher", "-f", "{connection_file}"]


def provisioner_config(
    spec: LaunchSpec, image_given: bool, launch_timeout: float
) -> dict[str, Any]:
    """The provisioner's traits for ``spec`` (the image only when the user named one)."""
    res = spec.resources
    config: dict[str, Any] = {
        "size": spec.size,
        "mode": spec.mode.value,
        "cpu": f"{res.cpu:g}",
        "mem": format_size(res.mem),
        "shm": format_size(res.shm),
        "gpu": res.gpu,
        "mounts": [str(m) for m in spec.mounts],
        "resource_group": spec.resource_group,
        "bootstrap": spec.bootstrap or "",
        "launch_timeout": launch_timeout,
    }
    if image_given:
        config["image"] = spec.image
    return config


def kernel_json(display_name: str, config: dict[str, Any]) -> dict[str, Any]:
    """The kernel.json of a cluster kernelspec."""
    return {
        "argv": KERNEL_ARGV,
        "display_name": display_name,
        "language": "python",
        "interrupt_mode": "signal",
        "metadata": {
            "kernel_provisioner": {"provisioner_name": PROVISIONER_NAME, "config": config}
        },
    }


def install(
    name: str,
    display_name: str,
    config: dict[str, Any],
    *,
    user: bool = False,
    sys_prefix: bool = False,
    prefix: str | None = None,
) -> str:
    """Install the kernelspec; returns the directory it was written to."""
    if not re.fullmatch(r"[A-Za-z0-9_-][A-Za-z0-9._-]{0,63}", name):
        raise InvalidRequest(
            f"name: {name!r} is not a valid kernelspec name; use ASCII letters, digits, "
            "'.', '_' and '-' (at most 64, not starting with '.')",
            "name",
        )
    if sys_prefix:
        prefix = sys.prefix
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, "kernel.json"), "w") as f:
            json.dump(kernel_json(display_name, config), f, indent=1)
        return str(
            KernelSpecManager().install_kernel_spec(
                tmp, kernel_name=name, user=user, prefix=prefix, replace=True
            )
        )
