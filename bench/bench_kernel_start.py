"""Kernel start-up time of a cluster kernelspec against a floor measured in the same run.

Run as ``.venv/bin/python bench/bench_kernel_start.py [--sizes 1,4,8] [--repeat 3]``.

For each cluster size N it measures, ``--repeat`` times each (alternating):

floor
    N bare containers of the same image and the same CPU/memory limits, created
    and started concurrently with aiodocker; the first runs ``python3 -m
    ipykernel_launcher -f <connection file>`` (the file, with the key, put in
    before start; the five kernel ports published on 127.0.0.1). Timed from the
    first API call until a ``kernel_info`` reply reaches an AsyncKernelClient.
ours
    ``AsyncKernelManager(kernel_name=<cluster kernelspec of size N>).start_kernel()``
    then ``wait_for_ready()`` (a ``kernel_info`` reply): a whole cluster session
    (network, N containers, SSH keys, sshd, data) with the kernel in main1.

It prints the medians and the ratio ours/floor (the goal is at most 1.25 at size
4), then the best run of each kind and their ratio, which other load on the
machine disturbs less. Both kinds get the same CPU/memory limits per container
(``--cpu``, ``--mem``); the cluster kernel's agent is given room for any size,
so the scheduler does not stop at the machine's core count. Everything runs in
a temporary Jupyter data/config/runtime dir, so nothing is written to the
user's; every container and network made is removed at the end, and the script
fails if any is left.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import statistics
import sys
import tarfile
import time
import uuid
from typing import Any

from common.bare import floor_connection
from common.constants import BENCH_LABEL, IMAGE, KERNEL_PORTS, MANAGER_LABEL
from common.kernels import (
    client_of,
    cluster_config,
    install_kernelspec,
    start_client,
    stop_kernel,
)
from common.sandbox import (
    check_nothing_left,
    jupyter_dirs,
    remove_bench_containers,
    store_manager_id,
)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1,4,8", help="cluster sizes, comma-separated")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each kind per size")
    parser.add_argument("--cpu", default="1", help="CPUs per container (both kinds)")
    parser.add_argument("--mem", default="512m", help="memory per container (both kinds)")
    parser.add_argument("--image", default=IMAGE)
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per start")
    args = parser.parse_args(argv)
    args.sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    return args


def install_kernelspecs(root: str, sizes: list[int], args: argparse.Namespace) -> None:
    """One cluster kernelspec ``bench-N`` per size, under the private prefix."""
    for size in sorted({1, *sizes}):  # size 1 is also the warm-up
        install_kernelspec(
            root, args.timeout, image=args.image, size=size, cpu=args.cpu, mem=args.mem
        )


# -- the floor -----------------------------------------------------------------------


def _connection_archive(connection: dict[str, Any]) -> bytes:
    buffer = io.BytesIO()
    data = json.dumps(connection).encode()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        info = tarfile.TarInfo("tmp/bench-kernel.json")
        info.size, info.mode, info.mtime = len(data), 0o600, time.time()
        tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


async def floor_once(docker: Any, size: int, args: argparse.Namespace, run_id: str) -> float:
    """Seconds from the first API call to a kernel_info reply, bare containers."""
    from jupyter_cluster.core.units import parse_cpu, parse_size

    inner, connection = floor_connection()
    host_config = {
        "NanoCpus": round(parse_cpu(args.cpu, "cpu") * 1e9),
        "Memory": parse_size(args.mem, "mem"),
    }

    def config(first: bool) -> dict[str, Any]:
        cmd = ["python3", "-m", "ipykernel_launcher", "-f", "/tmp/bench-kernel.json"]
        publish = {f"{p}/tcp": [{"HostIp": "127.0.0.1", "HostPort": ""}] for p in KERNEL_PORTS}
        return {
            "Image": args.image,
            "Entrypoint": cmd if first else ["sleep", "infinity"],
            "Cmd": [],
            "Labels": {BENCH_LABEL: run_id},
            "ExposedPorts": {f"{p}/tcp": {} for p in KERNEL_PORTS} if first else {},
            "HostConfig": {**host_config, **({"PortBindings": publish} if first else {})},
        }

    async def bring_up(first: bool) -> Any:
        container = await docker.containers.create(config(first))
        if first:
            await container.put_archive("/", _connection_archive(connection))
        await container.start()
        return container

    client = None
    start = time.monotonic()
    try:
        containers = await asyncio.gather(*(bring_up(i == 0) for i in range(size)))
        data = await docker.containers.get(containers[0].id)
        ports = data._container["NetworkSettings"]["Ports"]
        outer = {name: int(ports[f"{port}/tcp"][0]["HostPort"]) for name, port in inner.items()}
        # No heartbeat channel: with no kernel manager it would call a kernel that
        # is still importing dead after 1 s, and wait_for_ready would give up.
        client = client_of({**connection, **outer, "ip": "127.0.0.1"})
        await client.wait_for_ready(timeout=args.timeout)
        return time.monotonic() - start
    finally:
        if client is not None:
            client.stop_channels()
        await remove_bench_containers(docker, run_id)


# -- ours ----------------------------------------------------------------------------


async def ours_once(size: int, args: argparse.Namespace) -> float:
    """Seconds from start_kernel() to a kernel_info reply, cluster kernelspec of ``size``."""
    from jupyter_client.manager import AsyncKernelManager

    km = AsyncKernelManager(kernel_name=f"bench-{size}", config=cluster_config())
    start = time.monotonic()
    client = await start_client(km, args.timeout)  # shuts the kernel down if it fails
    seconds = time.monotonic() - start
    await stop_kernel(km, client)
    return seconds


# -- the run -------------------------------------------------------------------------


async def bench(args: argparse.Namespace, manager_id: str) -> dict[int, dict[str, list[float]]]:
    """Run every measurement; samples per size and kind."""
    import aiodocker

    run_id = uuid.uuid4().hex[:12]
    results: dict[int, dict[str, list[float]]] = {}
    docker = aiodocker.Docker()
    try:
        await ours_once(1, args)  # warm-up: imports, page cache, first store write
        for size in args.sizes:
            samples: dict[str, list[float]] = {"floor": [], "ours": []}
            for i in range(args.repeat):
                kinds = ("floor", "ours") if i % 2 == 0 else ("ours", "floor")
                for kind in kinds:
                    if kind == "floor":
                        seconds = await floor_once(docker, size, args, run_id)
                    else:
                        seconds = await ours_once(size, args)
                    samples[kind].append(seconds)
                    print(f"size {size} {kind:5} run {i + 1}: {seconds:.3f} s", file=sys.stderr)
                    await asyncio.sleep(0.5)  # let the engine settle after removals
            results[size] = samples
    finally:
        await remove_bench_containers(docker, run_id)
        await docker.close()
    check_nothing_left([f"{BENCH_LABEL}={run_id}", f"{MANAGER_LABEL}={manager_id}"])
    return results


def table(results: dict[int, dict[str, list[float]]]) -> str:
    """Medians and their ratio per size, then the best runs (less sensitive to other load)."""
    lines = ["size  floor s  ours s  ours/floor  |  best floor  best ours  ratio"]
    for size, samples in results.items():
        floor, ours = statistics.median(samples["floor"]), statistics.median(samples["ours"])
        best_floor, best_ours = min(samples["floor"]), min(samples["ours"])
        lines.append(
            f"{size:>4}  {floor:7.3f}  {ours:6.3f}  {ours / floor:10.2f}  |  "
            f"{best_floor:10.3f}  {best_ours:9.3f}  {best_ours / best_floor:5.2f}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Entry point: set up private Jupyter dirs, measure, print the table."""
    args = parse_args(argv)
    with jupyter_dirs() as root:
        manager_id = store_manager_id()
        install_kernelspecs(root, args.sizes, args)
        results = asyncio.run(bench(args, manager_id))
    print(f"kernel start-up, median of {args.repeat} (cpu {args.cpu}, mem {args.mem} each)")
    print(table(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
