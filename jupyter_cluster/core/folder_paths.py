"""Paths inside a data folder as users write them: ``NAME[/PATH]`` split and checked.

Pure: no file system access. The engine's folder files
(:mod:`jupyter_cluster.engine.folder_files`) walks the components this returns one
directory at a time without following links, so a path that passes here still
cannot leave its folder through a link; the REST handlers of folder files and the
CLI's ``folder ls``/``folder cp`` parse what users type with it.
"""

from __future__ import annotations

from ..errors import InvalidRequest
from .resources import validate_folder_name

#: Longest component most file systems accept (bytes, UTF-8).
MAX_COMPONENT = 255
#: Deepest path accepted inside a folder.
MAX_DEPTH = 64


def path_parts(path: str, field: str = "path") -> tuple[str, ...]:
    """The components of ``path`` relative to a folder's top; "" or "/" is the top.

    Refused (InvalidRequest naming ``field``): an absolute path, ``..``, NUL, a
    component longer than 255 bytes, more than 64 levels. ``.`` and empty
    components (``a//b``) are dropped.
    """
    if not isinstance(path, str):
        raise InvalidRequest(f"{field}: give a path inside the folder as text", field)
    if "\0" in path:
        raise InvalidRequest(f"{field}: a path cannot hold a NUL character", field)
    if path.startswith("/") and path.strip("/"):
        raise InvalidRequest(
            f"{field}: {path!r} is absolute; give a path inside the folder (like data/a.csv)",
            field,
        )
    parts = tuple(p for p in path.split("/") if p not in ("", "."))
    if ".." in parts:
        raise InvalidRequest(f"{field}: {path!r} goes up with '..'; stay inside the folder", field)
    for part in parts:
        if len(part.encode("utf-8", "surrogateescape")) > MAX_COMPONENT:
            raise InvalidRequest(f"{field}: a name in {path!r} is over 255 bytes", field)
    if len(parts) > MAX_DEPTH:
        raise InvalidRequest(f"{field}: {path!r} is deeper than {MAX_DEPTH} levels", field)
    return parts


def split_ref(ref: str, field: str = "path") -> tuple[str, tuple[str, ...]]:
    """``NAME[/PATH]`` as (folder name, components of PATH): the CLI's ``folder ls``
    argument and the folder side of ``folder cp`` (``NAME:PATH`` is accepted too)."""
    if not isinstance(ref, str) or not ref:
        raise InvalidRequest(f"{field}: give a data folder's name, like data or data/sub", field)
    name, sep, rest = ref.replace(":", "/", 1).partition("/")
    validate_folder_name(name, field)
    return name, path_parts(rest, field) if sep else ()


def join_parts(parts: tuple[str, ...]) -> str:
    """Components back to the ``a/b`` form used in replies and messages."""
    return "/".join(parts)
