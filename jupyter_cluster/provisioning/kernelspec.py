"""Writing kernelspecs that start their kernel in main1 of a new cluster session.

``jupyter cluster kernelspec install NAME …`` calls :func:`install`; the launch
parameters go to ``metadata.kernel_provisioner.config``, which jupyter_client
hands to :class:`~jupyter_cluster.provisioning.provisioner.ClusterProvisioner` as traits.
A kernelspec made from a launch profile also names it in ``metadata.cluster_profile``
(its fields were resolved when it was written).
"""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

from jupyter_client.kernelspec import KernelSpecManager

from ..core.models import LaunchSpec
from ..core.units import format_size
from ..errors import InvalidRequest
from ..whole_files import replaced_whole

PROVISIONER_NAME = "cluster-provisioner"
TIMES = "\N{MULTIPLICATION SIGN}"
#: The launcher icon of every cluster kernelspec (a kernelspec's ``logo-svg``).
LOGO = Path(__file__).with_name("resources") / "logo-svg.svg"
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
        # In kernel.json as given: a kernelspec is its installer's own file.
        "env": [f"{name}={value}" for name, value in spec.env],
        "launch_timeout": launch_timeout,
    }
    if image_given:
        config["image"] = spec.image
    return config


def display_name(spec: LaunchSpec, profile: str | None = None) -> str:
    """What a cluster kernelspec calls itself in the launcher: ``Cluster: 4`` times ``1
    CPU, 2g`` (with a multiplication sign), ``Cluster: NAME, 4`` times ... when made
    from profile NAME; every cluster kernelspec starts with "Cluster:", so they sit
    together."""
    res = spec.resources
    named = f"{profile}, " if profile else ""
    text = f"Cluster: {named}{spec.size} {TIMES} {res.cpu:g} CPU, {format_size(res.mem)}"
    if res.gpu:
        text += f", {res.gpu} GPU"
    if spec.mode.value != "single-node":
        text += f" ({spec.mode.value})"
    return text


def write_spec_dir(
    directory: str, display: str, config: dict[str, Any], profile: str | None = None
) -> None:
    """``kernel.json`` and the logo into ``directory`` (the extension's own kernelspec
    and :func:`install` both use it). Each file is replaced whole: a server starting
    (or restarting) rewrites its kernelspec while another of the same user's servers
    may be reading it to start a kernel."""
    with replaced_whole(os.path.join(directory, "kernel.json"), private=False) as f:
        json.dump(kernel_json(display, config, profile), f, indent=1)
    with replaced_whole(os.path.join(directory, LOGO.name), "wb", private=False) as f:
        f.write(LOGO.read_bytes())


def kernel_json(
    display_name: str, config: dict[str, Any], profile: str | None = None
) -> dict[str, Any]:
    """The kernel.json of a cluster kernelspec (``profile``: the launch profile its
    ``config`` was resolved from)."""
    metadata: dict[str, Any] = {
        "kernel_provisioner": {"provisioner_name": PROVISIONER_NAME, "config": config},
        # What JupyterLab's debugger looks for, as ipykernel's own kernelspec has it
        # (whatever is installed): the kernel is ipykernel, started so that debugpy
        # sees every module (core.kernel_command).
        "debugger": True,
    }
    if profile:
        metadata["cluster_profile"] = profile
    return {
        "argv": KERNEL_ARGV,
        "display_name": display_name,
        "language": "python",
        # ipykernel interrupts itself on an interrupt_request: no docker exec (or SSH
        # round trip) to signal it, which jupyter_client also pays on every shutdown.
        "interrupt_mode": "message",
        "metadata": metadata,
    }


def install(
    name: str,
    display_name: str,
    config: dict[str, Any],
    *,
    user: bool = False,
    sys_prefix: bool = False,
    prefix: str | None = None,
    profile: str | None = None,
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
        write_spec_dir(tmp, display_name, config, profile)
        return str(
            KernelSpecManager().install_kernel_spec(tmp, kernel_name=name, user=user, prefix=prefix)
        )
