"""The two sides of ``bench_multiagent.py``: bare containers on two agents, and ours.

The agents are the Docker-in-Docker engines of the multi-host tests
(``tests.multihost.agents.AgentCluster``: each a ``dockerd`` in a container of this
machine, both serving their API over TLS, in one Swarm). :class:`AgentFloor` talks
to them with aiodocker only (no engine code); ours go through a cluster kernelspec
(``AsyncKernelManager``) or :class:`ClusterManager` configured with the same agents.
Floor objects carry ``BENCH_LABEL=<run id>``; ours carry the run's manager id.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import ssl
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from bench_kernel_start import BENCH_LABEL, KERNEL_PORTS
from launch_support import (
    KERNEL,
    SSH,
    SSH_PORT,
    SSHD,
    exec_ok,
    files_archive,
    floor_connection,
    remove_made,
)


def agent_client(url: str, tls: dict[str, str] | None) -> Any:
    """An aiodocker client of an agent's engine (``tcp://`` URL; TLS with its client
    certificate when ``tls``), as any Docker client of that agent would be. aiodocker
    makes (and so closes) the connection pool itself."""
    import aiodocker

    address = url.removeprefix("tcp://")
    if tls is None:
        return aiodocker.Docker(url=f"http://{address}")
    context = ssl.create_default_context(cafile=tls["ca"])
    context.load_cert_chain(tls["cert"], tls["key"])
    return aiodocker.Docker(url=f"https://{address}", ssl_context=context)


def ready_script(hosts: list[str], timeout: float) -> str:
    """Bash run in main1: wait until every host's sshd sends its banner (``SSH-...`` read
    from ``HOST:2200``, retried every 20 ms), then ``ssh <last host> true`` must work
    (retried the same way); exits 1 after about ``timeout`` seconds. Cheap on purpose:
    it shares main1's CPU with the starting kernel."""
    tries = max(1, int(timeout / 0.02))
    give_up = f'n=$((n+1)); [ $n -ge {tries} ] && echo "$h never answered" >&2 && exit 1; '
    return (
        f"for h in {' '.join(hosts)}; do n=0; "
        f"until read -t 1 -r line 2>/dev/null </dev/tcp/$h/{SSH_PORT} && "
        f"[[ $line == SSH-* ]]; do {give_up}sleep 0.02; done; done; "
        f"h={hosts[-1]}; n=0; until {' '.join(SSH)} $h true; do {give_up}sleep 0.02; done"
    )


@dataclass
class AgentFloor:
    """Bare containers on the agents, on a Swarm overlay of their own; what was made."""

    clients: dict[str, Any]  # agent id -> aiodocker client
    addresses: dict[str, str]  # agent id -> the address its ports are published on
    image: str
    cpu: float
    mem: int
    run_id: str
    files: tuple[dict[str, bytes], dict[str, bytes]]  # a sub's, main1's (floor_keys)
    containers: list[Any] = field(default_factory=list)
    networks: list[Any] = field(default_factory=list)

    async def _start(
        self, agent: str, network: str, host: str, script: str, files: dict[str, bytes]
    ) -> Any:
        """Create a container on ``agent`` (main1 publishing the kernel's ports on the
        agent's address), put ``files`` in, start it; the inspected container."""
        docker = self.clients[agent]
        ports = KERNEL_PORTS if host == "main1" else ()
        config = {
            "Image": self.image,
            "Hostname": host,
            "Entrypoint": ["/bin/sh", "-c", script],
            "Cmd": [],
            "Labels": {BENCH_LABEL: self.run_id},
            "ExposedPorts": {f"{p}/tcp": {} for p in ports},
            "HostConfig": {
                "NanoCpus": round(self.cpu * 1e9),
                "Memory": self.mem,
                "MemorySwap": self.mem,
                "NetworkMode": network,
                "PortBindings": {f"{p}/tcp": [{"HostIp": "", "HostPort": ""}] for p in ports},
            },
            "NetworkingConfig": {"EndpointsConfig": {network: {"Aliases": [host]}}},
        }
        container = await docker.containers.create(config)
        self.containers.append(container)
        await container.put_archive("/", files_archive(files))
        await container.start()
        return await docker.containers.get(container.id)

    async def launch(self, placement: dict[str, str], timeout: float) -> float:
        """Seconds from the first API call until main1's kernel answers ``kernel_info``
        and ``ssh HOST true`` run in main1 worked for every host, the last sub last.

        ``placement``: host -> agent id (main1's agent creates the overlay network,
        as the engine's does)."""
        from jupyter_client.asynchronous import AsyncKernelClient

        inner, connection = floor_connection()
        main_files = {**self.files[1], "/tmp/bench/kernel.json": json.dumps(connection).encode()}
        hosts = list(placement)
        home = placement["main1"]
        client = None
        start = time.monotonic()
        try:
            name = f"jcbench-{self.run_id}-{uuid.uuid4().hex[:8]}"
            body = {
                "Name": name,
                "Driver": "overlay",
                "Attachable": True,
                "CheckDuplicate": True,
                "Labels": {BENCH_LABEL: self.run_id},
            }
            self.networks.append(await self.clients[home].networks.create(body))
            started = await asyncio.gather(
                *(
                    self._start(
                        placement[h],
                        name,
                        h,
                        f"{SSHD} & exec {KERNEL}" if h == "main1" else SSHD,
                        main_files if h == "main1" else self.files[0],
                    )
                    for h in hosts
                )
            )
            ports = started[0]._container["NetworkSettings"]["Ports"]
            outer = {n: int(ports[f"{p}/tcp"][0]["HostPort"]) for n, p in inner.items()}
            client = AsyncKernelClient()
            info: Any = {**connection, **outer, "ip": self.addresses[home]}
            client.load_connection_info(info)
            client.start_channels(hb=False)  # no manager: a heartbeat would call it dead early
            ssh = exec_ok(started[0], ["/bin/bash", "-c", ready_script(hosts, timeout)])
            await asyncio.gather(client.wait_for_ready(timeout=timeout), ssh)
            return time.monotonic() - start
        finally:
            if client is not None:
                client.stop_channels()

    async def remove(self) -> float:
        """Remove what was made (see :func:`launch_support.remove_made`); seconds."""
        return await remove_made(self.containers, self.networks)

    async def remove_run(self) -> None:
        """Remove every floor container and network of this run on every agent."""
        label = {"label": [f"{BENCH_LABEL}={self.run_id}"]}
        for docker in self.clients.values():
            found = await docker.containers.list(all=True, filters=label)
            await asyncio.gather(
                *(c.delete(force=True, v=True) for c in found), return_exceptions=True
            )
        for docker in self.clients.values():
            for net in await docker.networks.list(filters=label):
                with contextlib.suppress(Exception):  # an overlay gone through the other agent
                    await docker.networks.delete(net["Id"])


# -- ours ----------------------------------------------------------------------------


def engine_config(agents: list[dict[str, Any]], data_root: str) -> Any:
    """The ClusterManager's config: the two agents, their shared data root."""
    from traitlets.config import Config

    return Config({"ClusterManager": {"agents": agents, "data_root": data_root}})


async def placement_of(manager: Any, session_id: str) -> dict[str, str]:
    """host -> agent id of a session's containers; fails unless it spans two agents."""
    session = await manager.get(session_id)
    placed = {c.host: c.agent or "" for c in session.containers}
    if len(set(placed.values())) != 2:
        raise RuntimeError(f"the session did not span two agents: {placed}")
    return placed


async def ours_launch(
    kernel: str, config: Any, timeout: float, shutdowns: list[float]
) -> tuple[float, dict[str, str]]:
    """Seconds from ``start_kernel()`` of the cluster kernelspec ``kernel`` (it returns
    at RUNNING) until the kernel answers ``kernel_info`` and ``ssh <last sub> true``
    run in main1 exits 0, and the placement; then ``shutdown_kernel()`` into ``shutdowns``."""
    from jupyter_client.manager import AsyncKernelManager

    km = AsyncKernelManager(kernel_name=kernel, config=config)
    client = None
    start = time.monotonic()
    try:
        await km.start_kernel()
        client = km.client()
        client.start_channels()
        provisioner: Any = km.provisioner
        manager, session_id = provisioner.manager, provisioner.session_id
        session = await manager.get(session_id)
        last = session.containers[-1].host

        async def ssh() -> None:
            code = await manager.exec(session_id, "main1", ["ssh", last, "true"])
            if code != 0:
                raise RuntimeError(f"ssh {last} true exited with {code}")

        await asyncio.gather(client.wait_for_ready(timeout=timeout), ssh())
        seconds = time.monotonic() - start
        placed = await placement_of(manager, session_id)
        client.stop_channels()
        client = None
        begin = time.monotonic()
        await km.shutdown_kernel()
        shutdowns.append(time.monotonic() - begin)
        return seconds, placed
    finally:
        if client is not None:
            client.stop_channels()
        if km.has_kernel:
            await km.shutdown_kernel(now=True)


async def ours_terminate(manager: Any, spec: Any) -> float:
    """Launch ``spec`` with ``manager`` (untimed; it must span two agents), then
    seconds of ``terminate`` until it returns; fails if anything of it is left."""
    from launch_support import gone

    session = await manager.launch(spec)
    try:
        await placement_of(manager, session.id)
    finally:
        start = time.monotonic()
        await manager.terminate(session.id)
        seconds = time.monotonic() - start
    await gone(manager, session.id)
    return seconds
