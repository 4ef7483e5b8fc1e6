"""REST handlers of the files inside data folders: ``folders/{name}/files/{path}``.

``GET`` lists a directory (JSON) or streams a file's bytes; ``PUT`` uploads a file,
streamed to disk as it arrives (never held in memory); ``POST ?mkdir=1`` makes a
directory; ``PATCH {"to": path}`` renames or moves inside the folder; ``DELETE``
removes a file or an empty directory (any directory with ``?recursive=1``). Like
the other folder routes, each client acts on its own folders (and reads the shared
read-only ones). The Lab's folder panel calls these routes, and so does the CLI's
``folder ls``/``folder cp`` in team mode. The work is the engine's (the Engine
protocol's folder-file methods): the local engine's on its disk
(:mod:`jupyter_cluster.engine.folder_file_ops`), or in team mode, on a user's own
server, the shared service's, reached with the server's token
(:mod:`jupyter_cluster.client.remote_folder_files`): the service serves these same
routes for that user only.
"""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import quote

from jupyter_server.auth.decorator import authorized
from tornado import web

from ...core.folder_paths import join_parts, path_parts
from ...core.folder_streams import FolderUpload
from ...errors import ClusterError, InvalidRequest
from .base import API, ClusterHandler

#: Largest JSON body (PATCH) taken in: bodies stream in, so this handler keeps them.
MAX_JSON = 64 * 1024


@web.stream_request_body
class FolderFilesHandler(ClusterHandler):
    """One path inside one of this user's data folders (see the module docstring)."""

    upload: FolderUpload | None = None
    #: Why the upload failed while its body came in (answered once the body is in).
    upload_error: ClusterError | None = None
    small_body: bytes = b""

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
        self.upload = await self.service.engine.upload_folder_file(name, parts, owner=self.owner)

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

    async def data_received(self, chunk: bytes) -> None:
        if self.upload_error is not None:
            return  # the rest of a refused body is dropped
        if self.upload is not None:
            try:
                await self.upload.write(chunk)
            except ClusterError as exc:
                self.upload_error = exc
                self.upload.abort()
                self.upload = None
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
        parts = path_parts(path or "")
        opened = await self.service.engine.open_folder_path(name, parts, owner=self.owner)
        if opened.entries is not None:
            self.reply({"name": name, "path": join_parts(parts), "entries": opened.entries})
            return
        try:
            self.set_header("Content-Type", "application/octet-stream")
            self.set_header("Content-Length", str(opened.size))
            if download:
                disposition = f"attachment; filename*=UTF-8''{quote(parts[-1], safe='')}"
                self.set_header("Content-Disposition", disposition)
            async for data in opened.chunks():
                self.write(data)
                await self.flush()
        finally:
            await opened.aclose()
        # APIHandler.finish labels the reply JSON unless told: an empty file sends no
        # byte, so no flush has sent the headers above before it
        self.finish(set_content_type="application/octet-stream")

    @web.authenticated
    @authorized
    async def put(self, name: str, path: str | None = None) -> None:
        upload, self.upload = self.upload, None
        if self.upload_error is not None:
            raise self.upload_error
        assert upload is not None
        try:
            size = await upload.commit()
        except BaseException:
            upload.abort()
            raise
        parts = path_parts(path or "")
        self.reply({"name": name, "path": join_parts(parts), "size": size}, status=201)

    @web.authenticated
    @authorized
    async def post(self, name: str, path: str | None = None) -> None:
        if not self.flag("mkdir"):
            raise InvalidRequest("mkdir: POST makes a directory; add ?mkdir=1", "mkdir")
        parts = path_parts(path or "")
        await self.service.engine.make_folder_dir(name, parts, owner=self.owner)
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
        engine = self.service.engine
        await engine.move_folder_path(name, path_parts(path or ""), target, owner=self.owner)
        self.reply({"name": name, "path": join_parts(target)})

    @web.authenticated
    @authorized
    async def delete(self, name: str, path: str | None = None) -> None:
        parts, recursive = path_parts(path or ""), self.flag("recursive")
        await self.service.engine.delete_folder_path(
            name, parts, recursive=recursive, owner=self.owner
        )
        self.set_status(204)
        self.finish()


#: (pattern, handler class) of this module's routes, relative to the base URL.
default_handlers = [
    (f"{API}/folders/(?P<name>[^/]+)/files", FolderFilesHandler),
    (f"{API}/folders/(?P<name>[^/]+)/files/(?P<path>.+)", FolderFilesHandler),
]
