"""One Docker-in-Docker test agent as the tests see it: :class:`AgentHost`.

Made by :class:`tests.multihost.agents.AgentCluster`; the multi-host tests use it to
run ``docker`` against the agent's engine (over its URL, with TLS for agent1), to
pause it, and to get the ``ClusterManager.agents`` entry pointing at it.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from typing import Any

from .dockercli import docker


class AgentStartError(RuntimeError):
    """An agent did not come up (the message holds the end of its dockerd log)."""


@dataclass
class AgentHost:
    """One Docker-in-Docker agent: how to reach its engine, and its config entry."""

    id: str
    container: str
    ip: str
    url: str
    tls: dict[str, str] | None
    data_root: str

    def docker_args(self) -> list[str]:
        """``docker`` options that address this agent's engine over its URL."""
        args = ["-H", self.url]
        if self.tls:
            args += ["--tlsverify", "--tlscacert", self.tls["ca"]]
            args += ["--tlscert", self.tls["cert"], "--tlskey", self.tls["key"]]
        return args

    def docker(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        """Run ``docker ARGS`` against this agent's engine (over its URL, with TLS)."""
        return docker(*self.docker_args(), *args, timeout=timeout, check=False)

    def answers(self) -> bool:
        """Whether the agent's engine answers over its URL right now (5 s at most)."""
        try:
            return (
                self.docker("version", "--format", "{{.Server.Version}}", timeout=5).returncode == 0
            )
        except subprocess.TimeoutExpired:
            return False

    def inside(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        """Run ``ARGS`` inside the agent container (``docker exec``), e.g. its docker CLI."""
        return docker("exec", self.container, *args, timeout=timeout, check=False)

    def pause(self) -> None:
        """Freeze the whole agent (its engine and its containers): ``docker pause``."""
        docker("pause", self.container)

    def unpause(self) -> None:
        """Undo :meth:`pause`."""
        docker("unpause", self.container)

    def logs(self, tail: int = 60) -> str:
        """The end of the agent's dockerd log."""
        result = docker("logs", "--tail", str(tail), self.container, check=False)
        return (result.stdout + result.stderr).strip()

    def config(self, **overrides: Any) -> dict[str, Any]:
        """The ``ClusterManager.agents`` entry for this agent (``overrides`` replace keys)."""
        entry: dict[str, Any] = {
            "id": self.id,
            "url": self.url,
            "resource_group": "default",
            "address": self.ip,
            "data_root": self.data_root,
        }
        if self.tls:
            entry["tls"] = dict(self.tls)
        else:
            entry["insecure"] = True
        entry.update(overrides)
        return entry
