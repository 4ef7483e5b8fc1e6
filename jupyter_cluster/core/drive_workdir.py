"""Where the cluster kernel of a notebook in Lab's data-folders drive starts.

Lab's ``ClusterFolders`` contents drive (the labextension's folders drive) shows
the user's data folders; a notebook opened from it has the session path
``ClusterFolders:NAME/sub/nb.ipynb``, and jupyter_server asks the kernel manager
for a kernel in ``ClusterFolders:NAME/sub``, a path that is not under its
``root_dir`` (its ``cwd_for_path`` falls back to the root). The server extension
hands the drive-relative part (``NAME/sub``, :func:`drive_path`) to the cluster
provisioner (:mod:`jupyter_cluster.server.drive_kernels`), which asks here:

- a new session mounts data folder ``NAME`` (added to the launch's mounts unless it
  already mounts it; read-only when it is a shared folder) and the kernel starts in
  ``/home/work/NAME/sub``, where data folders are mounted
  (:func:`plan_drive_workdir`); the server's root folder is not mounted for it;
- a kernel started in a running session starts there if the session mounts
  ``NAME``, else in ``/home/work`` (:func:`map_drive_cwd`);
- a path with ``.``/``..``, or a folder that is neither the owner's nor shared,
  mounts nothing: ``/home/work``, and the kernel's first output says why.

Inside the container ``..`` or a symlink cannot leave the bind mount towards the
host. Pure: standard library and core only.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ..errors import InvalidRequest
from .naming import WORK_HOME
from .resources import Mount, validate_folder_name
from .workdir import Workdir, home

#: The drive's name in Lab (labextension ``DRIVE_NAME``).
DRIVE = "ClusterFolders"
PREFIX = f"{DRIVE}:"
_WHY = f"relative paths are in {WORK_HOME}"


def drive_path(path: object) -> str | None:
    """The part after ``ClusterFolders:`` of a kernel's API ``path`` (e.g. ``NAME/sub``;
    "" for the drive's top), or None when ``path`` is not in that drive. Called by the
    server extension's kernel-manager wrapper for every kernel start."""
    if not isinstance(path, str):
        return None
    text = path.lstrip("/")
    return text[len(PREFIX) :] if text.startswith(PREFIX) else None


def _split(relative: str) -> tuple[str, tuple[str, ...]] | str:
    """``(folder name, inner parts)`` of a drive-relative folder path, or why it is
    not one (a note)."""
    parts = [p for p in relative.split("/") if p]
    where = f"{PREFIX}{relative}"
    if not parts:
        return f"the notebook is at the top of the data-folders drive ({where}), in no folder"
    if any(p in (".", "..") or "\0" in p or "\\" in p for p in parts):
        return f"the notebook's path {where!r} leaves its data folder ('.' or '..')"
    try:
        validate_folder_name(parts[0], "path")
    except InvalidRequest:
        return f"{parts[0]!r} in {where!r} is not a data folder's name"
    return parts[0], tuple(parts[1:])


def _target(name: str, inner: tuple[str, ...]) -> str:
    return "/".join((WORK_HOME, name, *inner))


def plan_drive_workdir(
    relative: str, folders: Mapping[str, bool], mounts: Iterable[str]
) -> Workdir:
    """What a new session launched for a notebook in drive folder ``relative``
    (``NAME/sub``) mounts, and where its kernel starts.

    ``folders``: the data folders the session's owner may mount (name -> whether it
    is a shared one, read-only); ``mounts``: the launch's own ``mounts`` (``NAME`` or
    ``NAME:ro``). Called by the provisioner (``provisioning.workdir``).
    """
    split = _split(relative)
    if isinstance(split, str):
        return home(f"no data folder is mounted: {split}; {_WHY}")
    name, inner = split
    if any(Mount.parse(m).name == name for m in mounts):
        return Workdir(None, _target(name, inner))
    if name not in folders:
        return home(
            f"the notebook's data folder {name!r} is neither one of yours nor a shared "
            f"one, so it is not mounted; {_WHY}"
        )
    mount = f"{name}:ro" if folders[name] else name
    return Workdir(None, _target(name, inner), mount=mount)


def map_drive_cwd(relative: str, mounted: Iterable[str]) -> Workdir:
    """Where a kernel started in a running session starts for a notebook in drive
    folder ``relative``; ``mounted``: the names of the data folders the session
    mounts. Called by the provisioner for a kernel started or restarted there."""
    split = _split(relative)
    if isinstance(split, str):
        return home(f"no data folder is mounted: {split}; {_WHY}")
    name, inner = split
    if name not in set(mounted):
        return home(
            f"this cluster session does not mount the notebook's data folder {name!r} "
            f"(launch one with --mount {name}); {_WHY}"
        )
    return Workdir(None, _target(name, inner))
