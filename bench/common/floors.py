"""Floors on the local engine: the least any implementation needs to get the same
containers, kernel and sshd, made with aiodocker only (no engine code).

:class:`Floor` is the floor of ``bench_launch.py`` (launch to ready, concurrent
launches, removal) and ``bench_warm.py``'s cold floor; :class:`BareKernel` the floor
of ``bench_gateway.py`` (one ipykernel container on the default bridge). Built from
:mod:`common.bare`; every object a floor makes carries ``BENCH_LABEL=<run id>``.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from dataclasses import dataclass
from typing import Any

from common.bare import (
    KERNEL,
    SSH,
    SSHD,
    Made,
    bare_config,
    exec_ok,
    files_archive,
    floor_connection,
    sshd_answers,
)
from common.constants import BENCH_LABEL, KERNEL_PORTS, SSH_PORT
from common.kernels import client_of

#: What ours' main1 publishes (kernel_transport direct): its SSH port and kernel ports.
OURS_PORTS = (SSH_PORT, *KERNEL_PORTS)


@dataclass
class Floor(Made):
    """Bare-container launches with aiodocker on the local engine."""

    docker: Any
    opts: Any
    run_id: str
    mem: int
    files: tuple[dict[str, bytes], dict[str, bytes]]  # a sub's, main1's (floor_keys)

    async def network(self) -> str:
        """Create a fresh user-defined bridge network; its name."""
        name = f"jcbench-{self.run_id}-{uuid.uuid4().hex[:8]}"
        config = {"Name": name, "Driver": "bridge", "Labels": {BENCH_LABEL: self.run_id}}
        self.networks.append(await self.docker.networks.create(config))
        return name

    async def start(
        self,
        network: str,
        host: str,
        cpu: float,
        script: str,
        ports: tuple[int, ...],
        files: dict[str, bytes],
    ) -> tuple[Any, str]:
        """Create a container (same image, CPU, memory and swap limits as ours; ``ports``
        published on 127.0.0.1), put ``files`` in, start it; it and its address."""
        config = bare_config(
            self.opts.image, self.run_id, host, script, network, cpu, self.mem, ports, "127.0.0.1"
        )
        data = await self.start_container(self.docker, config, files)
        return data, str(data._container["NetworkSettings"]["Networks"][network]["IPAddress"])

    async def launch(self, size: int, cpu: float) -> float:
        """Case (a): seconds until the kernel answers ``kernel_info``, every sshd its
        banner and (size > 1) ``ssh <last sub> true`` run in main1 exits 0."""
        inner, connection = floor_connection()
        main_files = {**self.files[1], "/tmp/bench/kernel.json": json.dumps(connection).encode()}
        hosts = ["main1", *(f"sub{i}" for i in range(1, size))]
        client = None
        start = time.monotonic()
        try:
            network = await self.network()
            started = await asyncio.gather(
                self.start(
                    network, "main1", cpu, f"{SSHD} & exec {KERNEL}", KERNEL_PORTS, main_files
                ),
                *(self.start(network, h, cpu, SSHD, (), self.files[0]) for h in hosts[1:]),
            )
            ports = started[0][0]._container["NetworkSettings"]["Ports"]
            outer = {n: int(ports[f"{p}/tcp"][0]["HostPort"]) for n, p in inner.items()}
            client = client_of({**connection, **outer, "ip": "127.0.0.1"})

            async def ssh() -> None:
                await asyncio.gather(*(sshd_answers(ip, self.opts.timeout) for _, ip in started))
                if size > 1:
                    await exec_ok(started[0][0], [*SSH, hosts[-1], "true"])

            await asyncio.gather(client.wait_for_ready(timeout=self.opts.timeout), ssh())
            return time.monotonic() - start
        finally:
            if client is not None:
                client.stop_channels()

    async def many(self, launches: int, size: int, cpu: float) -> float:
        """Seconds until ``launches`` x ``size`` bare containers, each group on its own
        network (its first publishing what ours' main1 does), all answer on port 2200."""
        start = time.monotonic()

        async def one() -> None:
            network = await self.network()
            started = await asyncio.gather(
                *(
                    self.start(network, f"h{i}", cpu, SSHD, () if i else OURS_PORTS, self.files[0])
                    for i in range(size)
                )
            )
            await asyncio.gather(*(sshd_answers(ip, self.opts.timeout) for _, ip in started))

        await asyncio.gather(*(one() for _ in range(launches)))
        return time.monotonic() - start

    async def remove_run(self) -> None:
        """Remove every floor container and network of this run (final clean-up)."""
        label = {"label": [f"{BENCH_LABEL}={self.run_id}"]}
        found = await self.docker.containers.list(all=True, filters=label)
        await asyncio.gather(*(c.delete(force=True, v=True) for c in found), return_exceptions=True)
        for net in await self.docker.networks.list(filters=label):
            await self.docker.networks.delete(net["Id"])


class BareKernel:
    """The floor of ``bench_gateway.py``: one bare container of the same image and
    limits on the default bridge, ``python3 -m ipykernel_launcher`` with its connection
    file put in before start, reached on the container's address (as
    gateway_provisioners reaches its kernel; nothing published). Created with
    aiodocker, removed with ``force``."""

    def __init__(self, docker: Any, image: str, cpu: float, mem: int, run_id: str) -> None:
        self.docker, self.image, self.cpu, self.mem, self.run_id = docker, image, cpu, mem, run_id
        self.container: Any = None

    async def start(self, timeout: float) -> float:
        """Seconds from the create call until the kernel answers ``kernel_info``."""
        _, connection = floor_connection()
        files = {"/tmp/bench/kernel.json": json.dumps(connection).encode()}
        config = {
            "Image": self.image,
            "Entrypoint": ["python3", "-m", "ipykernel_launcher", "-f", "/tmp/bench/kernel.json"],
            "Cmd": [],
            "Labels": {BENCH_LABEL: self.run_id},
            "HostConfig": {
                "NanoCpus": round(self.cpu * 1e9),
                "Memory": self.mem,
                "MemorySwap": self.mem,
            },
        }
        client = None
        begin = time.monotonic()
        try:
            self.container = await self.docker.containers.create(config)
            await self.container.put_archive("/", files_archive(files))
            await self.container.start()
            data = await self.docker.containers.get(self.container.id)
            address = data._container["NetworkSettings"]["IPAddress"]
            client = client_of({**connection, "ip": address})
            await client.wait_for_ready(timeout=timeout)
            return time.monotonic() - begin
        finally:
            if client is not None:
                client.stop_channels()

    async def remove(self) -> float:
        """Seconds to remove the container (force, with volumes)."""
        begin = time.monotonic()
        if self.container is not None:
            await self.container.delete(force=True, v=True)
            self.container = None
        return time.monotonic() - begin
