"""The fake agent's named volumes: what a session's start-up-files volume holds.

A mixin of :class:`~.fake.FakeAgent`. Files put into a container under one of its
volume mounts land in the volume; a container that starts with a volume mounted gets
the tree of its host copied into its own ``files``, as the real sub's first command
does (see :mod:`~jupyter_cluster.engine.launch.shared_files`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from ...errors import AgentError
from .base import FileEntry
from .fake_container import FakeContainer


class FakeVolumes:
    """``create_volume``/``remove_volume`` kept in :attr:`volumes` (name: labels, files)."""

    containers: dict[str, FakeContainer]
    volumes: dict[str, tuple[dict[str, str], dict[str, FileEntry]]]

    @property
    def _name(self) -> str:
        raise NotImplementedError

    def _enter(self, method: str, target: str, hostname: str | None = None) -> None:
        raise NotImplementedError

    async def create_volume(self, name: str, labels: Mapping[str, str]) -> None:
        """Record an empty volume; an existing one is kept as it is, as in Docker."""
        self._enter("create_volume", name)
        self.volumes.setdefault(name, (dict(labels), {}))

    async def remove_volume(self, name: str) -> None:
        """Forget a volume; a missing one is fine, one a container mounts is an error."""
        self._enter("remove_volume", name)
        users = [
            box.spec.name
            for box in self.containers.values()
            if any(m.volume and m.source == name for m in box.spec.mounts)
        ]
        if users:
            raise AgentError(
                f"agent {self._name}: removing volume {name} failed: volume is in use "
                f"({', '.join(users)})",
                self._name,
            )
        self.volumes.pop(name, None)

    def _put(self, box: FakeContainer, files: Sequence[FileEntry]) -> None:
        """Keep ``files`` in ``box`` or, under a volume mount, in that volume."""
        for entry in files:
            for mount in box.spec.mounts:
                if mount.volume and entry.path.startswith(mount.target):
                    if mount.readonly:
                        why = f"copying into {mount.target}: mounted volume is marked read-only"
                        raise AgentError(f"agent {self._name}: {why}", self._name)
                    self.volumes[mount.source][1][entry.path] = entry
                    break
            else:
                box.files[entry.path] = entry

    def _copy_tree(self, box: FakeContainer) -> None:
        """What a sub's first command does: its host's tree in a mounted volume copied in."""
        for mount in box.spec.mounts:
            if not mount.volume or mount.source not in self.volumes:
                continue
            tree = f"{mount.target}/{box.spec.hostname}/tree"
            for path, entry in self.volumes[mount.source][1].items():
                if path.startswith(tree + "/"):
                    box.files[path[len(tree) :]] = replace(entry, path=path[len(tree) :])
