"""REST handlers of data folders: ``GET/POST folders``, ``PATCH/DELETE folders/{name}``.

Every client acts on its own folders (and sees the shared read-only ones): on a
single-user server those of its owner, on the shared service of a team those of
the token's user (``ClusterManager.folders_per_owner``). The CLI's ``folder``
commands use them in team mode.
"""

from __future__ import annotations

from jupyter_server.auth.decorator import authorized
from tornado import web

from .base import API, ClusterHandler


class FoldersHandler(ClusterHandler):
    """List this user's data folders (and the shared ones), or create one."""

    @web.authenticated
    @authorized
    async def get(self) -> None:
        folders = await self.service.engine.list_folders(self.owner)
        self.reply([f.to_dict() for f in folders])

    @web.authenticated
    @authorized
    async def post(self) -> None:
        body = self.json_body()
        name = body.get("name") if isinstance(body, dict) else None
        if not isinstance(name, str):
            self.reply({"message": "name: give the folder's name", "field": "name"}, status=400)
            return
        info = await self.service.engine.create_folder(name, self.owner)
        self.set_header("Location", self.api_url("folders", info.name))
        self.reply(info.to_dict(), status=201)


class FolderHandler(ClusterHandler):
    """Rename one of this user's data folders, or delete it and its content."""

    @web.authenticated
    @authorized
    async def patch(self, name: str) -> None:
        body = self.json_body()
        new_name = body.get("name") if isinstance(body, dict) else None
        if not isinstance(new_name, str):
            self.reply({"message": "name: give the folder's new name", "field": "name"}, status=400)
            return
        info = await self.service.engine.rename_folder(name, new_name, self.owner)
        self.set_header("Location", self.api_url("folders", info.name))
        self.reply(info.to_dict())

    @web.authenticated
    @authorized
    async def delete(self, name: str) -> None:
        await self.service.engine.remove_folder(name, self.owner)
        self.set_status(204)
        self.finish()


#: (pattern, handler class) of this module's routes, relative to the base URL.
default_handlers = [
    (f"{API}/folders", FoldersHandler),
    (f"{API}/folders/(?P<name>[^/]+)", FolderHandler),
]
