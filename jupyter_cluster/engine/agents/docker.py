"""The real agent: one Docker engine, reached with aiodocker.

The manager creates one :class:`DockerAgent` per configured agent. This module is
the only place that speaks the Docker API; every aiodocker or connection error is
turned into :class:`~jupyter_cluster.errors.AgentError` here, with a message that
says which agent failed and what to check.
"""

from __future__ import annotations

import asyncio
import inspect
import io
import tarfile
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

import aiodocker
import aiohttp
from aiodocker.exceptions import DockerError
from aiodocker.multiplexed import multiplexed_result_stream

from ...core.resources import Resources
from ...errors import AgentError
from .base import (
    AgentConfig,
    AgentInfo,
    BindMount,
    ContainerSpec,
    ContainerState,
    FileEntry,
    NetworkState,
    OutputCallback,
)


class DockerAgent:
    """An agent backed by a Docker engine (local socket or ``tcp://`` URL)."""

    def __init__(self, config: AgentConfig) -> None:
        self.config = config
        self._docker: aiodocker.Docker | None = None

    @property
    def id(self) -> str:
        return self.config.id

    @property
    def docker(self) -> aiodocker.Docker:
        """The aiodocker client, created on first use inside the running loop."""
        if self._docker is None:
            self._docker = aiodocker.Docker(url=self.config.url or None)
        return self._docker

    def _fail(self, action: str, exc: BaseException) -> AgentError:
        if isinstance(exc, DockerError):
            detail = exc.message if isinstance(exc.message, str) else str(exc)
            return AgentError(f"agent {self.id}: {action} failed: {detail}", self.id)
        where = self.config.url or "the local Docker socket"
        return AgentError(
            f"agent {self.id}: cannot reach the Docker engine at {where} ({exc}); "
            "start dockerd (make setup does) or fix this agent's url in the configuration",
            self.id,
        )

    async def info(self) -> AgentInfo:
        try:
            data = await self.docker.system.info()
        except (DockerError, aiohttp.ClientError, OSError, ValueError) as exc:
            return AgentInfo(
                id=self.id,
                resource_group=self.config.resource_group,
                capacity=Resources(0, 0, 0, 0),
                gpu_ids=self.config.gpus,
                reachable=False,
                message=str(self._fail("info", exc)),
            )
        cpu = self.config.cpu if self.config.cpu is not None else float(data.get("NCPU", 0))
        mem = self.config.mem if self.config.mem is not None else int(data.get("MemTotal", 0))
        return AgentInfo(
            id=self.id,
            resource_group=self.config.resource_group,
            capacity=Resources(cpu=cpu, mem=mem, shm=0, gpu=len(self.config.gpus)),
            gpu_ids=self.config.gpus,
            reachable=True,
        )

    async def has_image(self, image: str) -> bool:
        try:
            await self.docker.images.inspect(image)
            return True
        except DockerError as exc:
            if exc.status == 404:
                return False
            raise self._fail(f"looking up image {image}", exc) from exc
        except (aiohttp.ClientError, OSError) as exc:
            raise self._fail(f"looking up image {image}", exc) from exc

    async def create_network(self, name: str, labels: Mapping[str, str], *, overlay: bool) -> str:
        config: dict[str, Any] = {
            "Name": name,
            "Driver": "overlay" if overlay else "bridge",
            "Attachable": True,
            "CheckDuplicate": True,
            "Labels": dict(labels),
        }
        try:
            network = await self.docker.networks.create(config)
            return str(network.id)
        except (DockerError, aiohttp.ClientError, OSError) as exc:
            raise self._fail(f"creating network {name}", exc) from exc

    async def remove_network(self, name_or_id: str) -> None:
        try:
            network = await self.docker.networks.get(name_or_id)
            await network.delete()
        except DockerError as exc:
            if exc.status != 404:
                raise self._fail(f"removing network {name_or_id}", exc) from exc
        except (aiohttp.ClientError, OSError) as exc:
            raise self._fail(f"removing network {name_or_id}", exc) from exc

    def _container_config(self, spec: ContainerSpec) -> dict[str, Any]:
        res = spec.resources
        host_config: dict[str, Any] = {
            "NanoCpus": round(res.cpu * 1e9),
            "Memory": res.mem,
            "MemorySwap": res.mem,  # equal to Memory: no swap
            "ShmSize": res.shm,
            "Init": True,
            "NetworkMode": spec.network,
            "Mounts": [
                {"Type": "bind", "Source": m.source, "Target": m.target, "ReadOnly": m.readonly}
                for m in spec.mounts
            ],
            "PortBindings": {
                f"{port}/tcp": [{"HostIp": self.config.address, "HostPort": ""}]
                for port in spec.publish
            },
        }
        if spec.gpu_ids:
            host_config["DeviceRequests"] = [
                {"Driver": "nvidia", "DeviceIDs": list(spec.gpu_ids), "Capabilities": [["gpu"]]}
            ]
        return {
            "Image": spec.image,
            "Hostname": spec.hostname,
            "User": spec.user,
            "WorkingDir": spec.workdir,
            "Env": [f"{k}={v}" for k, v in spec.env.items()],
            "Labels": dict(spec.labels),
            "Entrypoint": list(spec.command),
            "Cmd": [],
            "ExposedPorts": {f"{port}/tcp": {} for port in spec.publish},
            "HostConfig": host_config,
            "NetworkingConfig": {
                "EndpointsConfig": {spec.network: {"Aliases": list(spec.aliases)}}
            },
        }

    async def create_container(self, spec: ContainerSpec) -> str:
        try:
            container = await self.docker.containers.create(
                self._container_config(spec), name=spec.name
            )
            return str(container.id)
        except (DockerError, aiohttp.ClientError, OSError) as exc:
            raise self._fail(f"creating container {spec.name}", exc) from exc

    async def put_files(self, container_id: str, files: Sequence[FileEntry]) -> None:
        buffer = io.BytesIO()
        now = time.time()
        with tarfile.open(fileobj=buffer, mode="w") as tar:
            for entry in files:
                info = tarfile.TarInfo(entry.path.lstrip("/"))
                info.mode, info.uid, info.gid, info.mtime = entry.mode, entry.uid, entry.gid, now
                if entry.directory:
                    info.type = tarfile.DIRTYPE
                    tar.addfile(info)
                else:
                    info.size = len(entry.content)
                    tar.addfile(info, io.BytesIO(entry.content))
        try:
            await self.docker.containers.container(container_id).put_archive("/", buffer.getvalue())
        except (DockerError, aiohttp.ClientError, OSError) as exc:
            raise self._fail("copying start-up files into the container", exc) from exc

    async def start_container(self, container_id: str) -> None:
        try:
            await self.docker.containers.container(container_id).start()
        except (DockerError, aiohttp.ClientError, OSError) as exc:
            raise self._fail(f"starting container {container_id[:12]}", exc) from exc

    @staticmethod
    def _state(data: Mapping[str, Any]) -> ContainerState:
        state = data.get("State") or {}
        ports: dict[int, tuple[str, int]] = {}
        for key, bindings in ((data.get("NetworkSettings") or {}).get("Ports") or {}).items():
            if bindings:
                ports[int(key.split("/")[0])] = (
                    bindings[0]["HostIp"],
                    int(bindings[0]["HostPort"]),
                )
        host_config = data.get("HostConfig") or {}
        return ContainerState(
            image=(data.get("Config") or {}).get("Image", ""),
            resources=Resources(
                cpu=(host_config.get("NanoCpus") or 0) / 1e9,
                mem=host_config.get("Memory") or 0,
                shm=host_config.get("ShmSize") or 0,
                gpu=sum(
                    len(r.get("DeviceIDs") or []) for r in host_config.get("DeviceRequests") or []
                ),
            ),
            mounts=tuple(
                BindMount(m.get("Source", ""), m.get("Destination", ""), not m.get("RW", True))
                for m in data.get("Mounts") or []
            ),
            id=data["Id"],
            name=data.get("Name", "").lstrip("/"),
            labels=(data.get("Config") or {}).get("Labels") or {},
            running=bool(state.get("Running")),
            status=state.get("Status", "unknown"),
            exit_code=state.get("ExitCode"),
            ports=ports,
        )

    async def inspect_container(self, container_id: str) -> ContainerState | None:
        try:
            container = await self.docker.containers.get(container_id)
            return self._state(container._container)
        except DockerError as exc:
            if exc.status == 404:
                return None
            raise self._fail(f"inspecting container {container_id[:12]}", exc) from exc
        except (aiohttp.ClientError, OSError) as exc:
            raise self._fail(f"inspecting container {container_id[:12]}", exc) from exc

    async def remove_container(self, container_id: str) -> None:
        try:
            await self.docker.containers.container(container_id).delete(force=True, v=True)
        except DockerError as exc:
            # 404: already gone; 409: removal already in progress elsewhere.
            if exc.status not in (404, 409):
                raise self._fail(f"removing container {container_id[:12]}", exc) from exc
        except (aiohttp.ClientError, OSError) as exc:
            raise self._fail(f"removing container {container_id[:12]}", exc) from exc

    async def logs(
        self, container_id: str, *, tail: int | None = None, follow: bool = False
    ) -> AsyncIterator[str]:
        """Yield whole lines of the container's log; ``follow`` waits for more."""
        container = self.docker.containers.container(container_id)
        params: dict[str, Any] = {"tail": "all" if tail is None else str(max(tail, 0))}
        pending = ""
        try:
            if follow:
                # Not container.log(follow=True): aiodocker never releases that
                # response, so a reader that stops early (wait_ready stops at
                # "ready") would hold a connection of the pool (100) for as long as
                # the container runs. Here the response is closed on every exit.
                tty = bool(((await container.show()).get("Config") or {}).get("Tty"))
                query = self.docker._query(
                    f"containers/{container_id}/logs",
                    params={"stdout": True, "stderr": True, "follow": True, **params},
                    timeout=aiohttp.ClientTimeout(total=None, sock_read=None),
                )
                async with query as response, response:
                    async for chunk in multiplexed_result_stream(response, is_tty=tty):
                        pending += chunk
                        *lines, pending = pending.split("\n")
                        for line in lines:
                            yield line + "\n"
            else:
                listed = await container.log(stdout=True, stderr=True, **params)
                pending = "".join(listed)
                *lines, pending = pending.split("\n")
                for line in lines:
                    yield line + "\n"
        except DockerError as exc:
            raise self._fail(f"reading logs of {container_id[:12]}", exc) from exc
        except (aiohttp.ClientError, OSError) as exc:
            raise self._fail(f"reading logs of {container_id[:12]}", exc) from exc
        if pending:
            yield pending

    async def exec(
        self,
        container_id: str,
        cmd: Sequence[str],
        *,
        user: str = "work",
        workdir: str = "/home/work",
        env: Mapping[str, str] | None = None,
        on_output: OutputCallback | None = None,
    ) -> int:
        try:
            container = self.docker.containers.container(container_id)
            execution = await container.exec(
                list(cmd), user=user, workdir=workdir, environment=dict(env or {})
            )
            async with execution.start(detach=False) as stream:
                while True:
                    message = await stream.read_out()
                    if message is None:
                        break
                    if on_output is not None:
                        result = on_output(message.stream, message.data)
                        if inspect.isawaitable(result):
                            await result
            for _ in range(50):
                data = await execution.inspect()
                if not data.get("Running"):
                    return int(data.get("ExitCode") or 0)
                await asyncio.sleep(0.02)
            return int((await execution.inspect()).get("ExitCode") or 0)
        except (DockerError, aiohttp.ClientError, OSError) as exc:
            raise self._fail(f"running {' '.join(cmd)[:60]!r}", exc) from exc

    @staticmethod
    def _label_filter(labels: Mapping[str, str]) -> dict[str, list[str]]:
        return {"label": [f"{k}={v}" for k, v in labels.items()]}

    async def list_containers(self, labels: Mapping[str, str]) -> list[ContainerState]:
        try:
            found = await self.docker.containers.list(all=True, filters=self._label_filter(labels))
            states = await asyncio.gather(*(self.inspect_container(c.id) for c in found))
            return [state for state in states if state is not None]
        except (DockerError, aiohttp.ClientError, OSError) as exc:
            raise self._fail("listing containers", exc) from exc

    async def list_networks(self, labels: Mapping[str, str]) -> list[NetworkState]:
        try:
            found = await self.docker.networks.list(filters=self._label_filter(labels))
        except (DockerError, aiohttp.ClientError, OSError) as exc:
            raise self._fail("listing networks", exc) from exc
        return [
            NetworkState(
                id=n["Id"], name=n["Name"], labels=n.get("Labels") or {}, driver=n["Driver"]
            )
            for n in found
        ]

    async def close(self) -> None:
        if self._docker is not None:
            await self._docker.close()
            self._docker = None
