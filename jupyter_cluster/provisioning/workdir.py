"""The notebook's folder for a cluster kernel: ``c.ClusterProvisioner.mount_notebook_dir``.

A base of :class:`~.provisioner.ClusterProvisioner`. Its ``pre_launch`` hands the
kernel manager's ``cwd`` (the notebook's folder, which jupyter_server derives from
the notebook's path under its ``root_dir``) to :meth:`NotebookDir.new_session_workdir`
for a session it launches, or :meth:`NotebookDir.running_session_workdir` for a
kernel started or restarted in a running one. The decisions are
:mod:`jupyter_cluster.core.workdir`'s; this module gathers the facts: the resolved
paths, the root folder's owner, whether the engine is local and its agents this
machine's Docker engine, work's uid, where the session's data folders are (a
notebook in one starts there when the server's folder is not mounted). The kernel
gets the reason it starts in
/home/work in :data:`NOTE_ENV`, which the in-container extension shows as the
first output of the kernel's first cell (runtime/incluster.py).

A notebook opened from Lab's data-folders drive (``ClusterFolders:NAME/sub``) is
not under the server's folder: the server extension passes its drive-relative path
as the :data:`DRIVE_KWARG` argument of the kernel's start
(:mod:`jupyter_cluster.server.drive_kernels`), and :meth:`NotebookDir.drive_workdir`
asks the engine which folders the owner may mount and lets
:mod:`jupyter_cluster.core.drive_workdir` decide: the new session mounts ``NAME``
and the kernel starts in ``/home/work/NAME/sub``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import Any

from traitlets import Bool, HasTraits

from ..config import local_owner
from ..core.drive_workdir import map_drive_cwd, plan_drive_workdir
from ..core.models import Session
from ..core.resources import Mount
from ..core.workdir import (
    MOUNT_POINT,
    Workdir,
    closed_to,
    in_data_folder,
    inside,
    map_cwd,
    plan_workdir,
    read_only_root,
)
from ..errors import ClusterError

#: The kernel's environment variable holding why it does not start in the
#: notebook's folder, or that the folder is read-only (read and removed by the
#: in-container extension).
NOTE_ENV = "JUPYTER_CLUSTER_WORKDIR_NOTE"
#: The start_kernel argument with a notebook's folder in the data-folders drive
#: (``NAME/sub``), set by the server extension for cluster kernels only.
DRIVE_KWARG = "cluster_drive_path"
#: Why a kernel of the shared service never gets this server's folder.
SERVICE = "the kernel runs on the shared service's agents, which cannot see this server's files"


def _resolved(path: object) -> str | None:
    """``path`` resolved, for a str or a path object (``jupyter execute`` gives the
    notebook's folder as a ``pathlib.Path``); None for anything else or empty."""
    if isinstance(path, os.PathLike):
        path = os.fspath(path)
    return os.path.realpath(path) if isinstance(path, str) and path else None


def _data_folders(engine: Any, owner: str, names: Iterable[str]) -> dict[str, str]:
    """Where ``owner``'s data folders ``names`` are on this machine (resolved); none
    through the shared service, whose folders this server cannot see."""
    space = getattr(engine, "folders_for", None)
    if getattr(engine, "host_folder_mount", None) is None or space is None:
        return {}
    found = {}
    for name in names:
        try:
            found[name] = os.path.realpath(space(owner).path(name))
        except (ClusterError, OSError):
            continue  # the launch itself says what is wrong with the folder
    return found


def _folders_down(root: str, cwd: str) -> list[tuple[str, int, int, int]]:
    """Each folder from ``root`` down to ``cwd`` (both resolved), with its owner,
    group and mode, for :func:`~jupyter_cluster.core.workdir.closed_to`; none when
    ``cwd`` is not inside ``root`` (the plan then says so)."""
    relative = inside(root, cwd)
    if relative is None:
        return []
    paths = [root]
    for part in [] if relative == "." else relative.split("/"):
        paths.append(os.path.join(paths[-1], part))
    found = []
    for path in paths:
        info = os.stat(path)
        found.append((path, info.st_uid, info.st_gid, info.st_mode))
    return found


class NotebookDir(HasTraits):
    """The ``mount_notebook_dir`` setting and the facts its decision needs (``parent``:
    the kernel manager, whose own parent in a Jupyter server has ``root_dir``)."""

    mount_notebook_dir = Bool(
        True,
        config=True,
        help="Mount the Jupyter server's root folder read-write at "
        f"{MOUNT_POINT} in every container of a session a notebook's kernel launches, "
        "and start the kernel in the notebook's folder there. Done only in single-user "
        "mode, when every agent is this machine's Docker engine (a Unix socket) and the "
        "root folder's owner has work's uid (c.ContainerHardening.work_uid), so files "
        "written in the containers belong to that owner; otherwise, or when off, the "
        "kernel starts in /home/work and its first output says why.",
    )

    def _root(self, cwd: str) -> str | None:
        """The folder to mount: the Jupyter server's root_dir, resolved; outside a
        server (``jupyter execute``, nbclient) the notebook's folder ``cwd`` itself."""
        km = getattr(self, "parent", None)
        return _resolved(getattr(getattr(km, "parent", None), "root_dir", None)) or cwd

    def new_session_workdir(self, engine: Any, kwargs: Mapping[str, Any]) -> Workdir:
        """What a session about to be launched mounts, and where its kernel starts;
        ``kwargs``: the kernel manager's launch arguments (``cwd``)."""
        cwd = _resolved(kwargs.get("cwd"))
        facts = getattr(engine, "host_folder_mount", None)  # a local ClusterManager only
        refused, work_uid = facts() if facts is not None else (SERVICE, -1)
        root = self._root(cwd) if cwd is not None else None
        owner: int | None = None
        closed = ""
        if root is not None and cwd is not None and not refused:
            try:
                owner = os.stat(root).st_uid
                if read_only_root(owner):
                    closed = closed_to(_folders_down(root, cwd), work_uid)
            except OSError:
                root = None
        plan = plan_workdir(
            cwd=cwd,
            enabled=self.mount_notebook_dir,
            refused=refused,
            root=root,
            root_owner=owner,
            work_uid=work_uid,
            closed=closed,
        )
        names = [Mount.parse(m).name for m in getattr(self, "mounts", ())]
        return in_data_folder(plan, cwd, _data_folders(engine, local_owner(), names))

    def running_session_workdir(
        self, engine: Any, session: Session, kwargs: Mapping[str, Any]
    ) -> Workdir:
        """Where a kernel started in the running ``session`` starts: the notebook's
        folder if the session mounts the folder it is in, else /home/work."""
        cwd = _resolved(kwargs.get("cwd"))
        if cwd is not None and getattr(engine, "host_folder_mount", None) is None:
            return plan_workdir(
                cwd=cwd, enabled=True, refused=SERVICE, root=None, root_owner=None, work_uid=-1
            )
        spec = session.spec
        folders = _data_folders(engine, session.owner, [m.name for m in spec.mounts])
        return in_data_folder(map_cwd(spec.workdir, cwd), cwd, folders)

    async def drive_workdir(self, engine: Any, relative: str, session: Session | None) -> Workdir:
        """Where the kernel of a notebook in drive folder ``relative`` (``NAME/sub``)
        starts: in a new session (``session`` None) that mounts ``NAME`` if its owner
        may (``Workdir.mount``: added to the launch's mounts), or in the running
        ``session`` if it mounts it; else /home/work with a note. The owner's folders
        come from the engine (this machine's, or the shared service's for the caller)."""
        if session is not None:
            return map_drive_cwd(relative, [m.name for m in session.spec.mounts])
        try:
            folders = {f.name: f.shared for f in await engine.list_folders(local_owner())}
        except ClusterError:
            folders = {}  # the note then says the folder is not the owner's
        return plan_drive_workdir(relative, folders, getattr(self, "mounts", ()))
