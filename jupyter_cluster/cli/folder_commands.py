"""``jupyter cluster folder ls NAME[/PATH]`` and ``folder cp SRC DST``: files in data folders.

Called by :func:`jupyter_cluster.cli.commands.run` for those two commands. The
folder side of ``cp`` is written ``NAME:PATH`` (like scp; ``NAME:`` is the
folder's top), the other side is a path on this machine; a local path holding
a ``:`` is written ``./a:b``. Copies stream in chunks both ways and one file at a
time. With a local engine the files are reached through the engine's data
folders (:mod:`jupyter_cluster.engine.folder_files`); on a team's shared service
(a remote engine) through its REST routes ``folders/{name}/files/{path}``, as
this user.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import tempfile
from collections.abc import AsyncIterator, Iterator
from datetime import datetime
from typing import Any
from urllib.parse import quote

from ..config import local_owner
from ..core.folder_paths import join_parts, path_parts, split_ref
from ..errors import InvalidRequest, NotFound
from . import format as cli_format

CHUNK = 1 << 20


class _Local:
    """A local engine's folders, as this machine's user."""

    def __init__(self, engine: Any) -> None:
        self.space = engine.folders_for(local_owner())

    async def listing(self, name: str, parts: tuple[str, ...]) -> list[dict[str, Any]]:
        files = self.space.files(name)
        info = files.info(parts)
        return files.list(parts) if info["type"] == "directory" else [info]

    async def is_dir(self, name: str, parts: tuple[str, ...]) -> bool:
        try:
            return bool(self.space.files(name).info(parts)["type"] == "directory")
        except NotFound:  # absent: a new file's name
            return False

    async def read(self, name: str, parts: tuple[str, ...]) -> AsyncIterator[bytes]:
        for chunk in self.space.files(name).read(parts, CHUNK):
            yield chunk

    async def write(self, name: str, parts: tuple[str, ...], chunks: Iterator[bytes]) -> int:
        upload = self.space.files(name).writer(parts)
        try:
            for chunk in chunks:
                upload.write(chunk)
        except BaseException:
            upload.abort()
            raise
        return upload.commit()


class _Remote:
    """The shared service's folders, through its REST routes as this user."""

    def __init__(self, engine: Any) -> None:
        self.http = engine.http

    def _path(self, name: str, parts: tuple[str, ...]) -> str:
        tail = "/".join(quote(p, safe="") for p in parts)
        return f"folders/{quote(name, safe='')}/files" + (f"/{tail}" if tail else "")

    async def listing(self, name: str, parts: tuple[str, ...]) -> list[dict[str, Any]]:
        if parts:
            above = await self.http.call("GET", self._path(name, parts[:-1]))
            match = [e for e in above["entries"] if e["name"] == parts[-1]]
            if match and match[0]["type"] != "directory":
                return match
        reply = await self.http.call("GET", self._path(name, parts))
        return list(reply["entries"])

    async def is_dir(self, name: str, parts: tuple[str, ...]) -> bool:
        if not parts:
            return True
        try:
            above = await self.http.call("GET", self._path(name, parts[:-1]))
        except NotFound:  # absent: a new file's name
            return False
        return any(e["name"] == parts[-1] and e["type"] == "directory" for e in above["entries"])

    async def read(self, name: str, parts: tuple[str, ...]) -> AsyncIterator[bytes]:
        from ..client.http import raise_for

        url = self.http.base + self._path(name, parts)
        async with self.http.aclient.stream("GET", url) as response:
            if not response.is_success:
                await response.aread()
                raise_for(response, self.http.address.url)
            if "json" in response.headers.get("content-type", ""):
                raise InvalidRequest(f"{name}:{join_parts(parts)} is a directory", "source")
            async for chunk in response.aiter_bytes(CHUNK):
                yield chunk

    async def write(self, name: str, parts: tuple[str, ...], chunks: Iterator[bytes]) -> int:
        from ..client.http import raise_for

        async def body() -> AsyncIterator[bytes]:
            for chunk in chunks:
                yield chunk

        url = self.http.base + self._path(name, parts)
        response = await self.http.aclient.put(url, content=body())
        raise_for(response, self.http.address.url)
        return int(response.json()["size"])


def _folders(engine: Any) -> _Local | _Remote:
    return _Local(engine) if hasattr(engine, "folders_for") else _Remote(engine)


def _folder_side(arg: str, field: str) -> tuple[str, tuple[str, ...]] | None:
    """(name, parts) when ``arg`` is ``NAME:PATH``, None when it is a local path."""
    head, sep, _ = arg.partition(":")
    if not sep or "/" in head:
        return None
    return split_ref(arg, field)


async def folder_ls(engine: Any, args: argparse.Namespace) -> int:
    """``folder ls NAME[/PATH]``: a directory's entries (or one file's)."""
    name, parts = split_ref(args.ref, "path")
    entries = await _folders(engine).listing(name, parts)
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


def _local_chunks(path: str) -> Iterator[bytes]:
    with open(path, "rb") as src:
        while chunk := src.read(CHUNK):
            yield chunk


async def folder_cp(engine: Any, args: argparse.Namespace) -> int:
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
    folders = _folders(engine)
    if dst is not None:  # upload
        if not os.path.isfile(args.source):
            raise InvalidRequest(f"source: {args.source} is not a file on this machine", "source")
        name, parts = dst
        if not parts or args.destination.endswith("/") or await folders.is_dir(name, parts):
            parts = (*parts, *path_parts(os.path.basename(args.source)))
        size = await folders.write(name, parts, _local_chunks(args.source))
        print(f"copied {args.source} to {name}:{join_parts(parts)} ({size} bytes)")
        return 0
    assert src is not None
    name, parts = src
    if not parts:
        raise InvalidRequest("source: name a file in the folder (NAME:PATH)", "source")
    target = args.destination
    if os.path.isdir(target):
        target = os.path.join(target, parts[-1])
    where = os.path.dirname(os.path.abspath(target))
    fd, temp = tempfile.mkstemp(dir=where, prefix=".cluster-cp-")
    size = 0
    try:
        with os.fdopen(fd, "wb") as out:
            async for chunk in folders.read(name, parts):
                out.write(chunk)
                size += len(chunk)
        os.replace(temp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp)
        raise
    print(f"copied {name}:{join_parts(parts)} to {target} ({size} bytes)", file=sys.stdout)
    return 0
