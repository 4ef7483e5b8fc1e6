"""Bare containers, the floors' building blocks (aiodocker only, no engine code): the
files put in before start, the create body, the kernel's connection file, what was
made and its removal, and the checks that sshd answers and a command in a container
exits 0.

Used by :mod:`common.floors` (the local engine's floors) and :mod:`common.agents`
(the floor on two agents), and by ``bench_launch.py``, ``bench_warm.py`` and
``bench_multiagent.py`` (:func:`floor_keys`) and ``bench_kernel_start.py``
(:func:`floor_connection`). Every container and network made with them carries
``BENCH_LABEL=<run id>``.
"""

from __future__ import annotations

import asyncio
import io
import os
import tarfile
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from common.constants import BENCH_LABEL, KERNEL_PORTS, PORT_NAMES, SSH_PORT

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
    shared = {
        "/tmp/bench/host_key": keys["host:h"].encode(),
        "/root/.ssh/authorized_keys": (keys["user.pub"] + "\n").encode(),
    }
    return shared, {**shared, "/tmp/bench/id": keys["user"].encode()}


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


def bare_config(
    image: str,
    run_id: str,
    host: str,
    script: str,
    network: str,
    cpu: float,
    mem: int,
    ports: tuple[int, ...],
    host_ip: str,
) -> dict[str, Any]:
    """A floor container's create body: ``image`` running ``sh -c script`` as ``host``
    on ``network``, ``cpu`` CPUs and ``mem`` bytes (swap equal to it, as ours), ``ports``
    published on ``host_ip`` (empty: every address), labelled with the run's id."""
    return {
        "Image": image,
        "Hostname": host,
        "Entrypoint": ["/bin/sh", "-c", script],
        "Cmd": [],
        "Labels": {BENCH_LABEL: run_id},
        "ExposedPorts": {f"{p}/tcp": {} for p in ports},
        "HostConfig": {
            "NanoCpus": round(cpu * 1e9),
            "Memory": mem,
            "MemorySwap": mem,
            "NetworkMode": network,
            "PortBindings": {f"{p}/tcp": [{"HostIp": host_ip, "HostPort": ""}] for p in ports},
        },
        "NetworkingConfig": {"EndpointsConfig": {network: {"Aliases": [host]}}},
    }


@dataclass
class Made:
    """The containers and networks a floor made, and their removal (the floor of a
    terminate). A base of :class:`Floor` and :class:`common.agents.AgentFloor`."""

    containers: list[Any] = field(default_factory=list, kw_only=True)
    networks: list[Any] = field(default_factory=list, kw_only=True)

    async def remove(self) -> float:
        """Remove the containers concurrently (force, volumes), then the networks, and
        forget them; seconds."""
        start = time.monotonic()
        await asyncio.gather(*(c.delete(force=True, v=True) for c in self.containers))
        await asyncio.gather(*(n.delete() for n in self.networks))
        seconds = time.monotonic() - start
        self.containers.clear()
        self.networks.clear()
        return seconds

    async def start_container(
        self, docker: Any, config: dict[str, Any], files: dict[str, bytes]
    ) -> Any:
        """Create a container of ``config`` with the aiodocker client ``docker`` (kept
        for :meth:`remove`), put ``files`` in, start it; the inspected container."""
        container = await docker.containers.create(config)
        self.containers.append(container)
        await container.put_archive("/", files_archive(files))
        await container.start()
        return await docker.containers.get(container.id)


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
