"""REST handlers of the files inside data folders: ``folders/{name}/files/{path}``.

``GET`` lists a directory (JSON) or streams a file's bytes; ``PUT`` uploads a file,
streamed to disk as it arrives (never held in memory); ``POST ?mkdir=1`` makes a
directory; ``PATCH {"to": path}`` renames or moves inside the folder; ``DELETE``
removes a file or an empty directory (any directory with ``?recursive=1``). Like
the other folder routes, each client acts on its own folders (and reads the shared
read-only ones). The work is done by :mod:`jupyter_cluster.engine.folder_files`;
the Lab's folder panel and the CLI's ``folder ls``/``folder cp`` (in team mode)
call these routes.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from typing import Any
from urllib.parse import quote

from jupyter_server.auth.decorator import authorized
from tornado import web

from ...core.folder_paths import join_parts, path_parts
from ...engine.folder_files import CHUNK, FolderFiles, Upload
from ...errors import InvalidRequest
from .base import API, ClusterHandler

#: Largest JSON body (PATCH) taken in: bodies stream in, so this handler keeps them.
MAX_JSON = 64 * 1024


@web.stream_request_body
class FolderFilesHandler(ClusterHandler):
    """One path inside one of this user's data folders (see the module docstring)."""

    upload: Upload | None = None
    small_body: bytes = b""

    def files(self, name: str) -> FolderFiles:
        """The files of folder ``name`` as this client sees it."""
        folders_for = getattr(self.service.engine, "folders_for", None)
        if folders_for is None:
            raise InvalidRequest(
                "name: this server's data folders live on the shared cluster service; "
                "reach their files through the service's own folders/{name}/files route",
                "name",
            )
        files: FolderFiles = folders_for(self.owner).files(name)
        return files

    async def prepare(self) -> None:  # type: ignore[override]
        if self.request.method != "GET" and self.path_kwargs.get("path") is None:
            raise web.HTTPError(405)  # the top is the folder itself: folders/{name}
        await super().prepare()
        if self.request.method != "PUT" or self._finished:
            return
        # The body streams in before put() runs: check who it is before taking any.
        if self.current_user is None:
            raise web.HTTPError(403)
        if not self.authorizer.is_authorized(self, self.current_user, "write", self.auth_resource):
            raise web.HTTPError(403)
        name, parts = self.path_kwargs["name"], path_parts(self.path_kwargs.get("path") or "")
        self.upload = self.files(name).writer(parts)

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        if status_code != 405:
            super().write_error(status_code, **kwargs)
            return
        # Before routing (an unknown method) path_kwargs is not set yet: read the URL.
        top = re.fullmatch(r".*/folders/[^/]+/files/?", self.request.path) is not None
        self.set_header("Allow", "GET" if top else "GET, PUT, POST, PATCH, DELETE")
        self.set_header("Content-Type", "application/json")
        message = "the top of a folder is only listed; change the folder at folders/{name}"
        self.finish(json.dumps({"message": message, "reason": "Method Not Allowed", "field": None}))

    def data_received(self, chunk: bytes) -> None:
        if self.upload is not None:
            self.upload.write(chunk)
        elif len(self.small_body) + len(chunk) <= MAX_JSON:
            self.small_body += chunk
        else:
            raise web.HTTPError(413)

    def on_connection_close(self) -> None:
        if self.upload is not None:
            self.upload.abort()
            self.upload = None

    def on_finish(self) -> None:
        if self.upload is not None:  # refused or failed before put() committed it
            self.upload.abort()
            self.upload = None

    @web.authenticated
    @authorized
    async def get(self, name: str, path: str | None = None) -> None:
        download = self.flag("download")
        files = self.files(name)
        parts = path_parts(path or "")
        info = files.info(parts)
        if info["type"] == "directory":
            entries = files.list(parts)
            self.reply({"name": name, "path": join_parts(parts), "entries": entries})
            return
        fd, size = files.open_read(parts)
        self.set_header("Content-Type", "application/octet-stream")
        self.set_header("Content-Length", str(size))
        if download:
            self.set_header(
                "Content-Disposition", f"attachment; filename*=UTF-8''{quote(parts[-1], safe='')}"
            )
        loop = asyncio.get_running_loop()
        try:
            while data := await loop.run_in_executor(None, _read, fd):
                self.write(data)
                await self.flush()
        finally:
            os.close(fd)
        self.finish()

    @web.authenticated
    @authorized
    async def put(self, name: str, path: str | None = None) -> None:
        upload, self.upload = self.upload, None
        assert upload is not None
        size = upload.commit()
        parts = path_parts(path or "")
        self.reply({"name": name, "path": join_parts(parts), "size": size}, status=201)

    @web.authenticated
    @authorized
    async def post(self, name: str, path: str | None = None) -> None:
        if not self.flag("mkdir"):
            raise InvalidRequest("mkdir: POST makes a directory; add ?mkdir=1", "mkdir")
        parts = path_parts(path or "")
        self.files(name).mkdir(parts)
        self.reply({"name": name, "path": join_parts(parts), "type": "directory"}, status=201)

    @web.authenticated
    @authorized
    async def patch(self, name: str, path: str | None = None) -> None:
        self.request.body = self.small_body
        body = self.json_body()
        to = body.get("to") if isinstance(body, dict) else None
        if not isinstance(to, str):
            raise InvalidRequest("to: give the new path inside the folder", "to")
        target = path_parts(to, "to")
        self.files(name).rename(path_parts(path or ""), target)
        self.reply({"name": name, "path": join_parts(target)})

    @web.authenticated
    @authorized
    async def delete(self, name: str, path: str | None = None) -> None:
        self.files(name).delete(path_parts(path or ""), recursive=self.flag("recursive"))
        self.set_status(204)
        self.finish()


def _read(fd: int) -> bytes:
    return os.read(fd, CHUNK)


#: (pattern, handler class) of this module's routes, relative to the base URL.
default_handlers = [
    (f"{API}/folders/(?P<name>[^/]+)/files", FolderFilesHandler),
    (f"{API}/folders/(?P<name>[^/]+)/files/(?P<path>.+)", FolderFilesHandler),
]
