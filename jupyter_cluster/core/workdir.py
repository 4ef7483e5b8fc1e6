"""Where a notebook's kernel starts in main1, and which host folder is mounted for it.

A kernel a Jupyter server starts for a notebook gets that notebook's folder as its
``cwd`` (jupyter_server's ``cwd_for_path``, a host path under the server's
``root_dir``). In single-user mode with agents that are this machine's Docker
engine, the server's ``root_dir`` is bind-mounted read-write at :data:`MOUNT_POINT`
in every container of the session, and the kernel starts in the notebook's folder
there (``ssh sub1 cat data.csv`` sees the same file). Otherwise, when the notebook
lives in a data folder the session mounts (at ``/home/work/<folder>``), the kernel
starts there (:func:`in_data_folder`); else in ``/home/work``, and its first output
says why (:attr:`Workdir.note`). A notebook opened from Lab's data-folders drive
(session path ``ClusterFolders:NAME/…``) is not under ``root_dir`` at all:
:mod:`.drive_workdir` decides for it.

:func:`plan_workdir` decides for a new session, :func:`map_cwd` for a kernel
started or restarted in a running one. The provisioner does the IO (realpath, stat,
which engine and agents) and passes the facts in. Pure: standard library only.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from dataclasses import dataclass, replace

from .naming import WORK_HOME

#: Where the server's folder appears in every container of a session. Not under
#: /home/work, where data folders are mounted by name.
MOUNT_POINT = "/mnt/lab"
#: jupyter_server's variable with a notebook kernel's notebook (a path on the server).
SESSION_NAME_ENV = "JPY_SESSION_NAME"
#: The setting that turns the mount off (named in notes).
SETTING = "c.ClusterProvisioner.mount_notebook_dir"
#: A root-owned root folder's note (the kernel's first output): it is read-only.
READ_ONLY_NOTE = (
    "the notebook's folder is mounted read-only: the server's root folder belongs to "
    "root, and the containers' user work is never root; to write next to the notebook, "
    "run the server as a user other than root from a folder of theirs (or write into "
    "a data folder)"
)


@dataclass(frozen=True)
class Workdir:
    """What a kernel's launch does about its folder.

    ``host_root``: the host directory to mount at :data:`MOUNT_POINT` (None: none);
    ``cwd``: the kernel's working directory in main1; ``note``: why that is not the
    notebook's folder ("" when it is, or when no folder was asked for); ``mount``:
    a data folder a new session mounts besides its launch's own (a ``Mount`` text,
    ``NAME`` or ``NAME:ro``; "" none), for a notebook in the data-folders drive
    (:mod:`.drive_workdir`).
    """

    host_root: str | None
    cwd: str
    note: str = ""
    mount: str = ""


def home(note: str) -> Workdir:
    """Start in /home/work, mounting nothing, saying ``note`` (if any)."""
    return Workdir(None, WORK_HOME, note)


def inside(root: str, path: str) -> str | None:
    """``path`` relative to ``root`` ("." for root itself), or None when it is not
    inside it. Both must be absolute and already resolved (realpath): no ``..``
    or symlink can then lead out."""
    root, path = posixpath.normpath(root), posixpath.normpath(path)
    if not (root.startswith("/") and path.startswith("/")):
        return None
    if path == root:
        return "."
    prefix = root if root.endswith("/") else root + "/"
    return path[len(prefix) :] if path.startswith(prefix) else None


def map_cwd(host_root: str | None, cwd: str | None) -> Workdir:
    """The kernel's folder in a session that mounts ``host_root`` (None: none) for a
    notebook in ``cwd`` (resolved host path; None: no notebook, so /home/work
    silently)."""
    if cwd is None:
        return home("")
    if host_root is None:
        return home(
            "this cluster session was launched without the notebook's folder mounted; "
            f"relative paths are in {WORK_HOME}"
        )
    relative = inside(host_root, cwd)
    if relative is None:
        return home(
            f"the notebook's folder is outside the folder this session mounts at "
            f"{MOUNT_POINT}; relative paths are in {WORK_HOME}"
        )
    target = MOUNT_POINT if relative == "." else f"{MOUNT_POINT}/{relative}"
    return Workdir(host_root, target)


def plan_workdir(
    *,
    cwd: str | None,
    enabled: bool,
    refused: str,
    root: str | None,
    root_owner: int | None,
    work_uid: int,
    closed: str = "",
) -> Workdir:
    """Whether a new session mounts the server's folder, and where its kernel starts.

    ``cwd``: the notebook's folder (resolved; None: the kernel is not a notebook's,
    nothing is mounted and nothing said); ``enabled``: :data:`SETTING`; ``refused``:
    why the session's agents cannot mount this machine's folders ("" when they can:
    single-user mode, every agent this machine's engine); ``root``: the server's
    ``root_dir`` (resolved; None: no server); ``root_owner``: its owner's uid;
    ``work_uid``: the containers' user; ``closed``: a folder on the way from the
    root to the notebook's that work may not enter, with its mode (see
    :func:`closed_to`; "" none). The folder is mounted read-write only when
    ``work`` has its owner's uid, so what the kernel writes belongs to the folder's
    owner on the host. A root-owned folder (a server run as root, as ``make lab``
    does) is mounted read-only (:func:`read_only_root`): files next to the notebook
    can be read, and nothing is written there as another user than root, since work
    is never root. Any other owner's is not mounted.
    """
    if cwd is None:
        return home("")
    why = f"relative paths are in {WORK_HOME}"
    if not enabled:
        return home(f"the notebook's folder is not mounted ({SETTING} is off); {why}")
    if refused:
        return home(f"the notebook's folder is not mounted: {refused}; {why}")
    if root is None:
        return home(f"the notebook's folder is not mounted: no Jupyter server root; {why}")
    if inside(root, cwd) is None:
        return home(
            f"the notebook's folder is not mounted: it is outside the server's root "
            f"folder (symlinks resolved); {why}"
        )
    if read_only_root(root_owner):
        if closed:  # the kernel could not even start there
            return home(
                f"the notebook's folder is not mounted: its server's root folder "
                f"belongs to root, and work (uid {work_uid}) may not enter {closed}; "
                f"{why}"
            )
        return replace(map_cwd(root, cwd), note=READ_ONLY_NOTE)
    if root_owner != work_uid:
        return home(
            f"the notebook's folder is not mounted: the server's root folder belongs to "
            f"uid {root_owner}, and the containers' user work has uid {work_uid}, so "
            f"files written there would not be its owner's (set "
            f"c.ContainerHardening.work_uid = {root_owner}); {why}"
        )
    return map_cwd(root, cwd)


def closed_to(folders: list[tuple[str, int, int, int]], work_uid: int) -> str:
    """The first of ``folders`` (path, owner uid, group id, mode; from the root down
    to the notebook's folder) that user work (uid and gid ``work_uid``) may not
    enter by its mode bits, as ``PATH (mode 0700)``; "" when work may enter all."""
    for path, uid, gid, mode in folders:
        if uid == work_uid:
            may = mode & 0o100
        elif gid == work_uid:
            may = mode & 0o010
        else:
            may = mode & 0o001
        if not may:
            return f"{path} (mode {mode & 0o7777:04o})"
    return ""


def read_only_root(owner: int | None) -> bool:
    """Whether the server's root folder, owned by ``owner``, is mounted read-only:
    when it is root's (work, never root, could not write there as its owner)."""
    return owner == 0


def in_data_folder(plan: Workdir, cwd: str | None, folders: Mapping[str, str]) -> Workdir:
    """``plan``, unless it starts the kernel in /home/work while the notebook's folder
    ``cwd`` (resolved) is inside one of the data folders the session mounts
    (``folders``: name -> resolved host path): then that folder's place in main1,
    mounting nothing more and saying nothing."""
    if plan.host_root is not None or cwd is None:
        return plan
    for name, path in sorted(folders.items()):
        relative = inside(path, cwd)
        if relative is not None:
            target = f"{WORK_HOME}/{name}" + ("" if relative == "." else f"/{relative}")
            return Workdir(None, target)
    return plan


def notebook_in_main1(plan: Workdir, server_path: str | None) -> str | None:
    """Where the notebook jupyter_server names ``server_path`` (:data:`SESSION_NAME_ENV`,
    a path on the server) is in main1: in the kernel's folder, when the kernel starts
    in the notebook's folder (mounted from the server, or a data folder); None when
    it starts in /home/work, where the notebook is not. Never the server's own path."""
    if not server_path or plan.cwd == WORK_HOME:
        return None
    return posixpath.join(plan.cwd, posixpath.basename(server_path))
