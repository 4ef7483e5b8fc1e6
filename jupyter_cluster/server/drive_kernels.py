"""Hand a notebook's data-folders-drive path to its cluster kernel's provisioner.

A notebook opened from Lab's ``ClusterFolders`` drive has the session path
``ClusterFolders:NAME/sub/nb.ipynb``; jupyter_server's session manager starts its
kernel with ``path="ClusterFolders:NAME/sub"``, and its ``cwd_for_path`` turns that
into the server's root folder (the drive is not on its disk). :func:`route_drive_paths`
wraps ``start_kernel`` of the server's kernel manager (this one instance; no class
is patched) so that, for a kernelspec provisioned by the cluster provisioner only,
the drive-relative folder (``NAME/sub``) also goes to the kernel's start as the
``cluster_drive_path`` argument; the provisioner then mounts that data folder and
starts the kernel in it (:mod:`jupyter_cluster.provisioning.workdir`,
:mod:`jupyter_cluster.core.drive_workdir`). It is kept for restarts with the other
start arguments. Other kernels, and every other path, start exactly as before.
Called once by the server extension (``ClusterApp.initialize_settings``).
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Any

from ..core.drive_workdir import drive_path
from ..provisioning.workdir import DRIVE_KWARG
from .kernel_start_wrap import Start, started, wrap_start_kernel

#: The provisioner's entry-point name (pyproject, ``jupyter_client.kernel_provisioners``).
PROVISIONER = "cluster-provisioner"
#: Marks a wrapped ``start_kernel`` (so wrapping twice does nothing).
_MARK = "_jupyter_cluster_drive"


async def is_cluster_kernel(km: Any, kernel_name: str | None) -> bool:
    """Whether kernelspec ``kernel_name`` (None: the kernel manager's default) is
    provisioned by the cluster provisioner; False for one that cannot be read."""
    ksm = getattr(km, "kernel_spec_manager", None)
    name = kernel_name or getattr(km, "default_kernel_name", None)
    if ksm is None or not name:
        return False
    try:
        spec = ksm.get_kernel_spec(name)
        if inspect.isawaitable(spec):
            spec = await spec
    except Exception:  # no such kernel: jupyter_server says so itself
        return False
    provisioner = (getattr(spec, "metadata", None) or {}).get("kernel_provisioner") or {}
    return isinstance(provisioner, dict) and provisioner.get("provisioner_name") == PROVISIONER


def route_drive_paths(km: Any) -> None:
    """Wrap ``km.start_kernel`` (see the module docstring); idempotent."""

    def around(start: Start) -> Callable[..., Awaitable[Any]]:
        async def start_kernel(*args: Any, **kwargs: Any) -> Any:
            relative = drive_path(kwargs.get("path"))
            if (
                relative is not None
                and DRIVE_KWARG not in kwargs
                and await is_cluster_kernel(km, kwargs.get("kernel_name"))
            ):
                kwargs[DRIVE_KWARG] = relative
            return await started(start, *args, **kwargs)

        return start_kernel

    wrap_start_kernel(km, _MARK, around)
