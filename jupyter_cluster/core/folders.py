"""FolderInfo: a data folder as users see it listed (name, path, shared or not).

Pure data: made by the engine's data folders (:mod:`jupyter_cluster.engine.folders`),
sent over REST by the server and read back by the shared service's client
(:mod:`jupyter_cluster.client.remote_engine`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class FolderInfo:
    """A data folder as listed to users."""

    name: str
    path: str
    #: One of the shared folders every user may mount read-only.
    shared: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "path": self.path, "shared": self.shared}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FolderInfo:
        return cls(str(data["name"]), str(data["path"]), bool(data.get("shared")))
