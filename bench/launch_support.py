"""The two sides of ``bench_launch.py``: bare-container floors and the real launches.

Floors talk to Docker with aiodocker only (no engine code); ours go through the
cluster kernelspec (``AsyncKernelManager``) or :class:`ClusterManager`, as a user's
front end would. Every floor object carries ``BENCH_LABEL=<run id>``; ours carry the
run's manager id, as in ``bench_kernel_start.py``.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import tarfile
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from bench_kernel_start import BENCH_LABEL, KERNEL_PORTS, MANAGER_LABEL, PORT_NAMES

SSH_PORT = 2200
#: sshd as the image ships it, on the cluster's port, with a host key put in before start.
SSHD = f"mkdir -p /run/sshd; /usr/sbin/sshd -D -e -p {SSH_PORT} -h /tmp/bench/host_key"
KERNEL = "python3 -m ipykernel_launcher -f /tmp/bench/kernel.json"


def files_archive(files: dict[str, bytes]) -> bytes:
    """A tar of ``files`` (absolute path: content), root-owned, mode 0600, with their
    directories (mode 0700) made first."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for directory in sorted({os.path.dirname(p).lstrip("/") for p in files}):
            info = tarfile.TarInfo(directory)
            info.type, info.mode, info.mtime = tarfile.DIRTYPE, 0o700, time.time()
            tar.addfile(info)
        for name, data in files.items():
            info = tarfile.TarInfo(name.lstrip("/"))
            info.size, info.mode, info.mtime = len(data), 0o600, time.time()
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def floor_keys() -> tuple[dict[str, bytes], dict[str, bytes]]:
    """The floor's files: every container a host key and root's authorized key; main1
    also the client key (as ours, made before the run, not per launch)."""
    from jupyter_cluster.engine.launch.keys import generate_session_keys

    keys = generate_session_keys("bench", ["h"])
    common = {
        "/tmp/bench/host_key": keys["host:h"].encode(),
        "/root/.ssh/authorized_keys": (keys["user.pub"] + "\n").encode(),
    }
    return common, {**common, "/tmp/bench/id": keys["user"].encode()}


#: The floor's ``ssh <last host> true`` in main1 (its own key; no known_hosts).
SSH = [
    "ssh",
    "-p",
    str(SSH_PORT),
    "-i",
    "/tmp/bench/id",
    "-o",
    "BatchMode=yes",
    "-o",
    "StrictHostKeyChecking=no",
    "-o",
    "UserKnownHostsFile=/dev/null",
    "-q",
]


#: What ours' main1 publishes (kernel_transport direct): its SSH port and kernel ports.
OURS_PORTS = (SSH_PORT, *KERNEL_PORTS)


def floor_connection() -> tuple[dict[str, int], dict[str, Any]]:
    """A floor kernel's ports inside its container, and its connection file (fresh key)."""
    inner = dict(zip(PORT_NAMES, KERNEL_PORTS, strict=True))
    connection: dict[str, Any] = {
        **inner,
        "ip": "0.0.0.0",
        "key": uuid.uuid4().hex,
        "transport": "tcp",
        "signature_scheme": "hmac-sha256",
    }
    return inner, connection


async def remove_made(containers: list[Any], networks: list[Any]) -> float:
    """Remove floor containers concurrently (force, volumes), then their networks, and
    forget them; seconds (the floor of a terminate)."""
    start = time.monotonic()
    await asyncio.gather(*(c.delete(force=True, v=True) for c in containers))
    await asyncio.gather(*(n.delete() for n in networks))
    seconds = time.monotonic() - start
    containers.clear()
    networks.clear()
    return seconds


@dataclass
class Floor:
    """Bare-container launches with aiodocker; what they made, for :meth:`remove`."""

    docker: Any
    opts: Any
    run_id: str
    mem: int
    files: tuple[dict[str, bytes], dict[str, bytes]]  # a sub's, main1's (floor_keys)
    containers: list[Any] = field(default_factory=list)
    networks: list[Any] = field(default_factory=list)

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
        config = {
            "Image": self.opts.image,
            "Hostname": host,
            "Entrypoint": ["/bin/sh", "-c", script],
            "Cmd": [],
            "Labels": {BENCH_LABEL: self.run_id},
            "ExposedPorts": {f"{p}/tcp": {} for p in ports},
            "HostConfig": {
                "NanoCpus": round(cpu * 1e9),
                "Memory": self.mem,
                "MemorySwap": self.mem,
                "NetworkMode": network,
                "PortBindings": {
                    f"{p}/tcp": [{"HostIp": "127.0.0.1", "HostPort": ""}] for p in ports
                },
            },
            "NetworkingConfig": {"EndpointsConfig": {network: {"Aliases": [host]}}},
        }
        container = await self.docker.containers.create(config)
        self.containers.append(container)
        await container.put_archive("/", files_archive(files))
        await container.start()
        data = await self.docker.containers.get(container.id)
        return data, str(data._container["NetworkSettings"]["Networks"][network]["IPAddress"])

    async def launch(self, size: int, cpu: float) -> float:
        """Case (a): seconds until the kernel answers ``kernel_info``, every sshd its
        banner and (size > 1) ``ssh <last sub> true`` run in main1 exits 0."""
        from jupyter_client.asynchronous import AsyncKernelClient

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
            client = AsyncKernelClient()
            info: Any = {**connection, **outer, "ip": "127.0.0.1"}
            client.load_connection_info(info)
            client.start_channels(hb=False)  # no manager: a heartbeat would call it dead early

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

    async def remove(self) -> float:
        """Remove what was made (see :func:`remove_made`); seconds."""
        return await remove_made(self.containers, self.networks)

    async def remove_run(self) -> None:
        """Remove every floor container and network of this run (final clean-up)."""
        label = {"label": [f"{BENCH_LABEL}={self.run_id}"]}
        found = await self.docker.containers.list(all=True, filters=label)
        await asyncio.gather(*(c.delete(force=True, v=True) for c in found), return_exceptions=True)
        for net in await self.docker.networks.list(filters=label):
            await self.docker.networks.delete(net["Id"])


async def sshd_answers(ip: str, timeout: float) -> None:
    """Poll ``ip:2200`` every 20 ms until sshd sends its banner (``SSH-2.0-...``)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            reader, writer = await asyncio.wait_for(asyncio.open_connection(ip, SSH_PORT), 1)
            try:
                if (await asyncio.wait_for(reader.readline(), 1)).startswith(b"SSH-"):
                    return
            finally:
                writer.close()
        except (OSError, asyncio.TimeoutError):
            pass
        await asyncio.sleep(0.02)
    raise TimeoutError(f"sshd at {ip}:{SSH_PORT} did not answer within {timeout:g} s")


async def exec_ok(container: Any, cmd: list[str]) -> None:
    """Run ``cmd`` in ``container`` (docker exec, attached, as root); fail unless it exits 0."""
    execution = await container.exec(cmd)
    async with execution.start(detach=False) as stream:
        while await stream.read_out() is not None:
            pass
    for _ in range(50):
        data = await execution.inspect()
        if not data.get("Running"):
            break
        await asyncio.sleep(0.02)
    if data.get("ExitCode"):
        raise RuntimeError(f"{' '.join(cmd)} exited with {data.get('ExitCode')}")


# -- ours ----------------------------------------------------------------------------


def cluster_config() -> Any:
    """Manager config: the local engine as an agent with room for every size."""
    from traitlets.config import Config

    return Config({"ClusterManager": {"agents": [{"id": "local", "cpu": 1024}]}})


async def ours_launch(size: int, opts: Any, shutdowns: list[float], config: Any = None) -> float:
    """Seconds from ``start_kernel()`` of the ``bench-<size>`` kernelspec (returns at
    RUNNING) until the kernel answers ``kernel_info`` and (size > 1) ``ssh <last sub>
    true`` run in main1 (docker exec) exits 0; then ``shutdown_kernel()`` into ``shutdowns``.
    ``config``: the kernel manager's (default :func:`cluster_config`)."""
    from jupyter_client.manager import AsyncKernelManager

    km = AsyncKernelManager(kernel_name=f"bench-{size}", config=config or cluster_config())
    client = None
    start = time.monotonic()
    try:
        await km.start_kernel()
        client = km.client()
        client.start_channels()
        provisioner: Any = km.provisioner
        last = f"sub{size - 1}"

        async def ssh() -> None:  # RUNNING: every sshd listens; size 1 has no sub
            if size > 1:
                code = await provisioner.manager.exec(
                    provisioner.session_id, "main1", ["ssh", last, "true"]
                )
                if code != 0:
                    raise RuntimeError(f"ssh {last} true exited with {code}")

        await asyncio.gather(client.wait_for_ready(timeout=opts.timeout), ssh())
        seconds = time.monotonic() - start
        client.stop_channels()
        client = None
        begin = time.monotonic()
        await km.shutdown_kernel()
        shutdowns.append(time.monotonic() - begin)
        return seconds
    finally:
        if client is not None:
            client.stop_channels()
        if km.has_kernel:
            await km.shutdown_kernel(now=True)


async def gone(manager: Any, session_id: str) -> None:
    """Fail unless no container and no network of the session exists any more."""
    from jupyter_cluster.core.naming import LABEL_SESSION

    labels = {LABEL_SESSION: session_id, MANAGER_LABEL: manager.store.manager_id}
    for agent in manager.pool.agents.values():
        left = await agent.list_containers(labels), await agent.list_networks(labels)
        if any(left):
            raise RuntimeError(f"session {session_id} left {left}")


async def ours_terminate(manager: Any, size: int, cpu: float, mem: int, opts: Any) -> float:
    """Launch a size-``size`` session (untimed), then seconds of ``terminate`` to gone."""
    spec = manager.make_spec(image=opts.image, size=size, cpu=cpu, mem=mem)
    session = await manager.launch(spec)
    start = time.monotonic()
    await manager.terminate(session.id)
    seconds = time.monotonic() - start
    await gone(manager, session.id)
    return seconds


async def ours_many(
    manager: Any, launches: int, size: int, cpu: float, mem: int, opts: Any
) -> float:
    """Seconds until ``launches`` concurrent size-``size`` launches are all RUNNING."""
    spec = manager.make_spec(image=opts.image, size=size, cpu=cpu, mem=mem)
    start = time.monotonic()
    results = await asyncio.gather(
        *(manager.launch(spec) for _ in range(launches)), return_exceptions=True
    )
    seconds = time.monotonic() - start
    await asyncio.gather(*(manager.terminate(s.id) for s in results if hasattr(s, "id")))
    for failed in results:
        if isinstance(failed, BaseException):
            raise failed
    return seconds
