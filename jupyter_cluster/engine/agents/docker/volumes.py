"""Named volumes on a Docker engine: made and removed for a session's start-up files.

A mixin of :class:`~.agent.DockerAgent`; called through the agent protocol by
:mod:`~jupyter_cluster.engine.launch.shared_files` (creation) and
:mod:`~jupyter_cluster.engine.launch.teardown` (removal).
"""

from __future__ import annotations

from collections.abc import Mapping

from aiodocker.volumes import DockerVolume

from .connection import DockerConnection


class DockerVolumes:
    """``create_volume`` and ``remove_volume`` of the Docker agent."""

    connection: DockerConnection

    async def create_volume(self, name: str, labels: Mapping[str, str]) -> None:
        """Create the local volume ``name`` carrying ``labels``."""
        conn = self.connection
        body = {"Name": name, "Driver": "local", "Labels": dict(labels)}
        await conn.call(f"creating volume {name}", conn.client.volumes.create(body))

    async def remove_volume(self, name: str) -> None:
        """Remove the volume ``name``; a missing one is not an error."""
        conn = self.connection
        volume = DockerVolume(conn.client, name)
        await conn.call(f"removing volume {name}", volume.delete(), missing=None)
