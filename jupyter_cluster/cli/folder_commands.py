"""``jupyter cluster folder ls NAME[/PATH]``, ``folder cp SRC DST`` and ``folder rm
NAME/PATH``: files in data folders.

Called by :func:`jupyter_cluster.cli.commands.run` for those commands. The
folder side of ``cp`` is written ``NAME:PATH`` (like scp; ``NAME:`` is the
folder's top), the other side is a path on this machine; a local path holding
a ``:`` is written ``./a:b``. A copy into a folder makes the directories of its
path that do not exist yet. Copies stream in chunks both ways and one file at a
time. Files are reached through the Engine protocol's folder-file methods: a
local engine's data folders on this machine, or on a team's shared service (a
remote engine) through its REST routes ``folders/{name}/files/{path}``, as this
user.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from collections.abc import AsyncIterator, Iterator
from datetime import datetime
from typing import Any, BinaryIO

from ..config import local_owner
from ..core.folder_paths import join_parts, path_parts, split_ref
from ..core.folder_streams import CHUNK
from ..engine.api import Engine
from ..errors import Conflict, InvalidRequest, NotFound
from ..whole_files import replaced_whole
from . import format as cli_format


async def _listing(engine: Engine[Any], name: str, parts: tuple[str, ...]) -> list[dict[str, Any]]:
    """A directory's entries, or a file's (or link's) own entry."""
    if parts:
        entry = await engine.folder_entry(name, parts, owner=local_owner())
        if entry["type"] != "directory":
            return [entry]
    opened = await engine.open_folder_path(name, parts, owner=local_owner())
    await opened.aclose()
    if opened.entries is None:  # replaced by a file meanwhile
        raise InvalidRequest(f"path: {name}/{join_parts(parts)} is not a directory", "path")
    return opened.entries


async def _is_dir(engine: Engine[Any], name: str, parts: tuple[str, ...]) -> bool:
    try:
        entry = await engine.folder_entry(name, parts, owner=local_owner())
    except NotFound:  # absent: a new file's name
        return False
    return bool(entry["type"] == "directory")


async def _make_parents(engine: Engine[Any], name: str, parts: tuple[str, ...]) -> None:
    """Make the directories of ``parts`` that do not exist yet, as ``mkdir -p`` would;
    one that exists as something else (a file, a link) is left for the write to refuse.
    The deepest is looked at first: when it exists, as mostly, that is one request."""
    if not parts:
        return
    with contextlib.suppress(NotFound):
        await engine.folder_entry(name, parts, owner=local_owner())
        return
    for depth in range(1, len(parts)):
        try:
            await engine.folder_entry(name, parts[:depth], owner=local_owner())
        except NotFound:
            with contextlib.suppress(Conflict):  # made by another copy meanwhile
                await engine.make_folder_dir(name, parts[:depth], owner=local_owner())
    with contextlib.suppress(Conflict):
        await engine.make_folder_dir(name, parts, owner=local_owner())


async def _read(engine: Engine[Any], name: str, parts: tuple[str, ...]) -> AsyncIterator[bytes]:
    opened = await engine.open_folder_path(name, parts, owner=local_owner())
    try:
        if opened.entries is not None:
            raise InvalidRequest(f"{name}:{join_parts(parts)} is a directory", "source")
        async for chunk in opened.chunks():
            yield chunk
    finally:
        await opened.aclose()


async def _write(
    engine: Engine[Any], name: str, parts: tuple[str, ...], chunks: Iterator[bytes]
) -> int:
    upload = await engine.upload_folder_file(name, parts, owner=local_owner())
    try:
        for chunk in chunks:
            await upload.write(chunk)
        return await upload.commit()
    except BaseException:
        upload.abort()
        raise


def _folder_side(arg: str, field: str) -> tuple[str, tuple[str, ...]] | None:
    """(name, parts) when ``arg`` is ``NAME:PATH``, None when it is a local path."""
    head, sep, _ = arg.partition(":")
    if not sep or "/" in head:
        return None
    return split_ref(arg, field)


async def folder_ls(engine: Engine[Any], args: argparse.Namespace) -> int:
    """``folder ls NAME[/PATH]``: a directory's entries (or one file's)."""
    name, parts = split_ref(args.ref, "path")
    entries = await _listing(engine, name, parts)
    rows = [
        (
            e["name"] + ("/" if e["type"] == "directory" else ""),
            e["type"],
            str(e["size"]) if e["type"] == "file" else "",
            datetime.fromtimestamp(e["mtime"]).strftime("%Y-%m-%d %H:%M"),
        )
        for e in entries
    ]
    text = cli_format.table(("NAME", "TYPE", "SIZE", "MODIFIED"), rows)
    print(json.dumps(entries, indent=2) if args.json else text)
    return 0


async def folder_rm_path(engine: Engine[Any], args: argparse.Namespace) -> int:
    """``folder rm NAME/PATH [-r]``: a file (or link) in a folder, or a directory: an
    empty one, or with ``-r`` one and its content."""
    name, parts = split_ref(args.name, "path")
    if not parts:  # "data/": never the whole folder by accident
        raise InvalidRequest(
            f"path: name a path inside the folder after '/'; `jupyter cluster folder rm "
            f"{name}` deletes the whole folder",
            "path",
        )
    # the engine refuses a directory that is not empty unless recursive (--recursive)
    await engine.delete_folder_path(name, parts, recursive=args.recursive, owner=local_owner())
    print(f"deleted {name}/{join_parts(parts)}")
    return 0


def _local_chunks(source: BinaryIO) -> Iterator[bytes]:
    while chunk := source.read(CHUNK):
        yield chunk


def _local_target(destination: str, file_name: str) -> str:
    """The local file a download writes: ``destination``, or ``file_name`` in it when
    it is a directory. Refused, as ``cp`` refuses it, when it ends in ``/`` but is no
    directory, or its directory does not exist (the download made a file named as
    the directory, or ended in a traceback)."""
    if os.path.isdir(destination):
        return os.path.join(destination, file_name)
    if destination.endswith(os.sep):
        raise InvalidRequest(
            f"destination: {destination} is not a directory on this machine", "destination"
        )
    where = os.path.dirname(os.path.abspath(destination))
    if not os.path.isdir(where):
        raise InvalidRequest(
            f"destination: {where} is not a directory on this machine", "destination"
        )
    return destination


async def folder_cp(engine: Engine[Any], args: argparse.Namespace) -> int:
    """``folder cp SRC DST``: one file into or out of a data folder."""
    src = _folder_side(args.source, "source")
    dst = _folder_side(args.destination, "destination")
    if (src is None) == (dst is None):
        raise InvalidRequest(
            "cp: one side must be a data folder (NAME:PATH) and the other a local path, "
            "e.g. `jupyter cluster folder cp results.csv data:runs/` or "
            "`jupyter cluster folder cp data:runs/results.csv .`",
            "source",
        )
    if dst is not None:  # upload
        if not os.path.isfile(args.source):
            raise InvalidRequest(f"source: {args.source} is not a file on this machine", "source")
        try:  # before anything is made in the folder
            source = open(args.source, "rb")  # noqa: SIM115 (closed below)
        except OSError as exc:
            raise InvalidRequest(
                f"source: cannot read {args.source}: {exc.strerror or exc}", "source"
            ) from None
        with source:
            name, parts = dst
            if not parts or args.destination.endswith("/") or await _is_dir(engine, name, parts):
                parts = (*parts, *path_parts(os.path.basename(args.source)))
            await _make_parents(engine, name, parts[:-1])
            size = await _write(engine, name, parts, _local_chunks(source))
        print(f"copied {args.source} to {name}:{join_parts(parts)} ({size} bytes)")
        return 0
    assert src is not None
    name, parts = src
    if not parts:
        raise InvalidRequest("source: name a file in the folder (NAME:PATH)", "source")
    target = _local_target(args.destination, parts[-1])
    size = 0
    try:
        with replaced_whole(target, "wb", private=False) as out:  # a file as `cp` makes one
            async for chunk in _read(engine, name, parts):
                out.write(chunk)
                size += len(chunk)
    except OSError as exc:  # this machine's side: no room, no right to write there
        raise InvalidRequest(
            f"destination: cannot write {target}: {exc.strerror or exc}", "destination"
        ) from None
    print(f"copied {name}:{join_parts(parts)} to {target} ({size} bytes)", file=sys.stdout)
    return 0
