"""The folder of a kernel that a REST launch starts (``notebook_dir`` of the body).

The Lab's launch dialog launches a session with ``start_kernel`` and then opens a
new notebook, on that kernel, in the file browser's folder; it sends that folder
(relative to the server's root) as ``notebook_dir``. :class:`~.service.ClusterService`
takes it out of the body before the launch policy sees it (:func:`take_notebook_dir`),
asks :func:`host_root_to_mount` whether the session mounts the server's root folder
(the same decision as for a notebook's kernel, :func:`~jupyter_cluster.core.workdir.
plan_workdir`), and starts the kernel with that ``path``: the provisioner then puts
its working directory in the folder, in main1, or says why it starts in /home/work.
A ``notebook_dir`` in Lab's data-folders drive (``ClusterFolders:NAME/sub``) mounts
no server folder: its kernel starts in ``/home/work/NAME/sub`` when the launch
mounts data folder ``NAME`` (:mod:`jupyter_cluster.core.drive_workdir`), else in
/home/work, saying why.
"""

from __future__ import annotations

import os
from typing import Any

from ..core.drive_workdir import drive_path
from ..core.workdir import plan_workdir
from ..errors import InvalidRequest

#: The launch body's key.
NOTEBOOK_DIR = "notebook_dir"
#: Why a session of the shared service never mounts this server's folder.
SERVICE = "the kernel runs on the shared service's agents, which cannot see this server's files"


def take_notebook_dir(body: Any) -> tuple[Any, str | None]:
    """``body`` without ``notebook_dir``, and its value (a folder relative to the
    server's root, ``""`` for the root itself; None when absent or null). Raises
    InvalidRequest (field ``notebook_dir``) for anything but such a path."""
    if not isinstance(body, dict) or NOTEBOOK_DIR not in body:
        return body, None
    rest = dict(body)
    value = rest.pop(NOTEBOOK_DIR)
    if value is None:
        return rest, None
    parts = value.split("/") if isinstance(value, str) else []
    if not isinstance(value, str) or value.startswith("/") or "\0" in value or ".." in parts:
        raise InvalidRequest(
            f"{NOTEBOOK_DIR}: give a folder relative to the server's root folder, such as "
            "'' or 'projects/a' (no leading '/', no '..')",
            NOTEBOOK_DIR,
        )
    return rest, value.strip("/")


def host_root_to_mount(engine: Any, root_dir: str, notebook_dir: str, enabled: bool) -> str | None:
    """The server's root folder (resolved) when a session whose kernel starts in
    ``notebook_dir`` mounts it, else None (the kernel then starts in /home/work and
    says why). ``enabled``: ``c.ClusterProvisioner.mount_notebook_dir``. None for a
    folder in the data-folders drive, which is no folder of the server's."""
    if drive_path(notebook_dir) is not None:
        return None
    root = os.path.realpath(root_dir)
    cwd = os.path.realpath(os.path.join(root, notebook_dir))
    facts = getattr(engine, "host_folder_mount", None)  # a local ClusterManager only
    refused, work_uid = facts() if facts is not None else (SERVICE, -1)
    try:
        owner: int | None = os.stat(root).st_uid
    except OSError:
        owner = None
    plan = plan_workdir(
        cwd=cwd, enabled=enabled, refused=refused, root=root, root_owner=owner, work_uid=work_uid
    )
    return plan.host_root
