"""The shared service's files inside data folders, as the Engine protocol's methods.

Mixed into :class:`~jupyter_cluster.client.remote_engine.RemoteEngine` (with the
rename of a whole folder, ``PATCH folders/{name}``): in team mode a
user's own Jupyter server (its REST handlers of ``folders/{name}/files/{path}``, so
the Lab's folder panel) and the CLI's ``folder ls``/``folder cp`` reach the files
through the service's same routes, with this server's token: the service decides
whose folders they are (another user's are not found) and does the work itself,
walking the path without following links. Bodies stream both ways in chunks
(:data:`~jupyter_cluster.core.folder_streams.CHUNK`): a download is read from the
service as it is sent on, an upload is sent as it arrives through a small queue.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import quote

import httpx

from ..core.folder_paths import join_parts
from ..core.folder_streams import CHUNK
from ..core.folders import FolderInfo
from ..errors import Conflict, InvalidRequest, NotFound
from .http import ServiceHTTP, raise_for

#: Chunks an upload may hold while the service is behind (a server's are 64 KiB, the CLI's 1 MiB).
QUEUED = 4


def files_path(name: str, path: tuple[str, ...]) -> str:
    """The service's route of ``path`` in folder ``name``, relative to its API."""
    tail = "/".join(quote(p, safe="") for p in path)
    return f"folders/{quote(name, safe='')}/files" + (f"/{tail}" if tail else "")


class RemoteRead:
    """A directory's entries or a file being downloaded from the service (see FolderRead)."""

    def __init__(
        self,
        entries: list[dict[str, Any]] | None,
        response: httpx.Response | None = None,
        http: ServiceHTTP | None = None,
    ) -> None:
        self.entries = entries
        self.response = response
        self.http = http
        self.size = int(response.headers.get("content-length") or 0) if response else 0

    async def chunks(self) -> AsyncIterator[bytes]:
        """The file's bytes as the service sends them."""
        if self.response is None:
            return
        try:
            async for data in self.response.aiter_bytes(CHUNK):
                yield data
        except httpx.HTTPError as exc:
            assert self.http is not None
            raise self.http._unreachable(exc) from exc
        finally:
            await self.aclose()

    async def aclose(self) -> None:
        """Close the service's reply."""
        if self.response is not None:
            response, self.response = self.response, None
            await response.aclose()


class RemoteUpload:
    """One PUT to the service, its body fed by :meth:`write` (see FolderUpload)."""

    def __init__(self, http: ServiceHTTP, path: str) -> None:
        self.http = http
        self.queue: asyncio.Queue[bytes | None] = asyncio.Queue(QUEUED)
        # No read timeout: the service answers once the whole body is in.
        timeout = httpx.Timeout(http.timeout, read=None, write=None)
        put = http.aclient.put(http.base + path, content=self._body(), timeout=timeout)
        self.task: asyncio.Future[httpx.Response] = asyncio.ensure_future(put)
        self.task.add_done_callback(_retrieved)

    async def _body(self) -> AsyncIterator[bytes]:
        while (data := await self.queue.get()) is not None:
            yield data

    async def _put(self, item: bytes | None) -> None:
        """Queue ``item``, unless the service has answered already (then raise why)."""
        if not self.task.done():
            with contextlib.suppress(asyncio.QueueFull):
                self.queue.put_nowait(item)
                return
        putting = asyncio.ensure_future(self.queue.put(item))
        either: set[asyncio.Future[Any]] = {putting, self.task}
        await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
        if not putting.done():
            putting.cancel()
            await self._reply()
            raise InvalidRequest("body: the service ended the upload early", "body")

    async def _reply(self) -> httpx.Response:
        try:
            response = await self.task
        except httpx.HTTPError as exc:
            raise self.http._unreachable(exc) from exc
        raise_for(response, self.http.address.url)
        return response

    async def write(self, data: bytes) -> None:
        """Send ``data`` on (waits while :data:`QUEUED` chunks are on their way)."""
        await self._put(data)

    async def commit(self) -> int:
        """End the body and wait for the service's answer; the size it wrote."""
        await self._put(None)
        return int((await self._reply()).json()["size"])

    def abort(self) -> None:
        """Cut the request: the service drops what it received."""
        self.task.cancel()


def _retrieved(task: asyncio.Future[httpx.Response]) -> None:
    """Mark a failed PUT's error as seen (an aborted upload's is nobody's business)."""
    if not task.cancelled():
        task.exception()


class RemoteFolderFiles:
    """The Engine protocol's folder-file methods over the service's routes (a mixin).

    ``owner`` is for the protocol's signature: the service scopes every call to the
    token's user."""

    http: ServiceHTTP  # RemoteEngine's

    async def _open(self, name: str, path: tuple[str, ...]) -> RemoteRead:
        aclient = self.http.aclient
        request = aclient.build_request(
            "GET", self.http.base + files_path(name, path), timeout=httpx.Timeout(self.http.timeout)
        )
        try:
            response = await aclient.send(request, stream=True)
        except httpx.HTTPError as exc:
            raise self.http._unreachable(exc) from exc
        if response.is_success and "json" not in response.headers.get("content-type", ""):
            return RemoteRead(None, response, self.http)
        try:
            await response.aread()  # an error's or a directory's JSON
        except httpx.HTTPError as exc:
            raise self.http._unreachable(exc) from exc
        finally:
            await response.aclose()
        raise_for(response, self.http.address.url)
        return RemoteRead(list(response.json()["entries"]))

    async def folder_entry(
        self, name: str, path: tuple[str, ...], owner: str = ""
    ) -> dict[str, Any]:
        """``name``, ``type``, ``size`` and ``mtime`` of ``path``, from its parent's listing
        (the folder's top: a directory, its size and time unknown here: 0)."""
        above = await self._open(name, path[:-1])
        await above.aclose()
        if above.entries is None:
            where = f"{name}/{join_parts(path[:-1])}"
            raise InvalidRequest(f"path: {where!r} is not a directory", "path")
        if not path:
            return {"name": "", "type": "directory", "size": 0, "mtime": 0.0}
        for entry in above.entries:
            if entry["name"] == path[-1]:
                return entry
        raise NotFound(f"no file or directory {f'{name}/{join_parts(path)}'!r}")

    async def open_folder_path(
        self, name: str, path: tuple[str, ...], owner: str = ""
    ) -> RemoteRead:
        """A directory's entries, or a file streamed from the service (one GET)."""
        return await self._open(name, path)

    async def upload_folder_file(
        self, name: str, path: tuple[str, ...], owner: str = ""
    ) -> RemoteUpload:
        """An upload streamed to the service as :meth:`RemoteUpload.write` is called.

        Checked first, as the local engine checks before taking a byte (a service that
        refuses a PUT part-way may cut the connection instead of answering): the folder
        is the caller's and writable, the parent a directory, ``path`` not one."""
        if not path:
            raise InvalidRequest("path: give a path inside the folder", "path")
        folders = await self.http.call("GET", "folders")
        found = [f for f in folders if f["name"] == name]
        if found and found[0].get("shared"):
            raise Conflict(f"data folder {name!r} is shared and read-only")
        above = await self._open(name, path[:-1])  # NotFound: no such folder or parent
        await above.aclose()
        if above.entries is None:
            where = f"{name}/{join_parts(path[:-1])}"
            raise InvalidRequest(f"path: {where!r} is not a directory", "path")
        if any(e["name"] == path[-1] and e["type"] == "directory" for e in above.entries or ()):
            raise Conflict(f"{f'{name}/{join_parts(path)}'!r} is a directory; pick a file name")
        return RemoteUpload(self.http, files_path(name, path))

    async def rename_folder(self, name: str, new_name: str, owner: str = "") -> FolderInfo:
        """``PATCH folders/{name}`` ``{"name": new_name}`` on the service, which renames
        the caller's own folder (and refuses a shared or mounted one)."""
        reply = await self.http.call("PATCH", f"folders/{quote(name, safe='')}", {"name": new_name})
        return FolderInfo.from_dict(reply)

    async def make_folder_dir(self, name: str, path: tuple[str, ...], owner: str = "") -> None:
        """``POST ?mkdir=1`` on the service."""
        await self.http.call("POST", files_path(name, path), mkdir="1")

    async def move_folder_path(
        self, name: str, path: tuple[str, ...], to: tuple[str, ...], owner: str = ""
    ) -> None:
        """``PATCH {"to": …}`` on the service."""
        await self.http.call("PATCH", files_path(name, path), {"to": join_parts(to)})

    async def delete_folder_path(
        self, name: str, path: tuple[str, ...], recursive: bool = False, owner: str = ""
    ) -> None:
        """``DELETE`` on the service (``?recursive=1`` when asked)."""
        await self.http.call("DELETE", files_path(name, path), recursive="1" if recursive else None)
