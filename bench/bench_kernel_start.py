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
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

IMAGE = "jupyter-cluster/kernel:latest"
KERNEL_PORTS = (50001, 50002, 50003, 50004, 50005)  # shell, iopub, stdin, control, hb
PORT_NAMES = ("shell_port", "iopub_port", "stdin_port", "control_port", "hb_port")
BENCH_LABEL = "jupyter-cluster-bench.run-id"
MANAGER_LABEL = "jupyter-cluster.manager-id"


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


def store_manager_id() -> str:
    """The manager id of the store in the current Jupyter data dir (made if new): the
    label value that marks this run's Docker objects."""
    from jupyter_cluster.engine.store.sessions import Store
    from jupyter_cluster.paths import default_db_path

    store = Store(default_db_path())
    try:
        return store.manager_id
    finally:
        store.close()


@contextmanager
def jupyter_dirs() -> Iterator[str]:
    """A private JUPYTER_DATA_DIR/CONFIG_DIR/RUNTIME_DIR/PATH for the run; removed after."""
    root = tempfile.mkdtemp(prefix="jc-bench-")
    saved = {k: v for k, v in os.environ.items() if k.startswith("JUPYTER")}
    for key in saved:
        del os.environ[key]
    os.environ.update(
        JUPYTER_DATA_DIR=os.path.join(root, "data"),
        JUPYTER_CONFIG_DIR=os.path.join(root, "config"),
        JUPYTER_RUNTIME_DIR=os.path.join(root, "runtime"),
        JUPYTER_PATH=os.path.join(root, "prefix", "share", "jupyter"),
        JUPYTER_PLATFORM_DIRS="0",
    )
    try:
        yield root
    finally:
        for key in [k for k in os.environ if k.startswith("JUPYTER")]:
            del os.environ[key]
        os.environ.update(saved)
        shutil.rmtree(root, ignore_errors=True)


def install_kernelspecs(root: str, sizes: list[int], args: argparse.Namespace) -> None:
    """One cluster kernelspec ``bench-N`` per size, under the private prefix."""
    from jupyter_cluster.core.models import LaunchSpec
    from jupyter_cluster.provisioning import kernelspec

    for size in sorted({1, *sizes}):  # size 1 is also the warm-up
        spec = LaunchSpec.create(image=args.image, size=size, cpu=args.cpu, mem=args.mem)
        config = kernelspec.provisioner_config(spec, True, args.timeout)
        kernelspec.install(
            f"bench-{size}", f"bench {size}", config, prefix=os.path.join(root, "prefix")
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
    from jupyter_client.asynchronous import AsyncKernelClient

    from jupyter_cluster.core.units import parse_cpu, parse_size

    key = uuid.uuid4().hex
    inner = {name: port for name, port in zip(PORT_NAMES, KERNEL_PORTS, strict=True)}
    connection = {
        **inner,
        "ip": "0.0.0.0",
        "key": key,
        "transport": "tcp",
        "signature_scheme": "hmac-sha256",
    }
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
        client = AsyncKernelClient()
        outer = {name: int(ports[f"{port}/tcp"][0]["HostPort"]) for name, port in inner.items()}
        client.load_connection_info({**connection, **outer, "ip": "127.0.0.1"})
        # No heartbeat channel: with no kernel manager it would call a kernel that
        # is still importing dead after 1 s, and wait_for_ready would give up.
        client.start_channels(hb=False)
        await client.wait_for_ready(timeout=args.timeout)
        return time.monotonic() - start
    finally:
        if client is not None:
            client.stop_channels()
        await remove_bench_containers(docker, run_id)


async def remove_bench_containers(docker: Any, run_id: str) -> None:
    """Remove every floor container of this run."""
    found = await docker.containers.list(all=True, filters={"label": [f"{BENCH_LABEL}={run_id}"]})
    await asyncio.gather(*(c.delete(force=True, v=True) for c in found))


# -- ours ----------------------------------------------------------------------------


async def ours_once(size: int, args: argparse.Namespace) -> float:
    """Seconds from start_kernel() to a kernel_info reply, cluster kernelspec of ``size``."""
    from jupyter_client.manager import AsyncKernelManager
    from traitlets.config import Config

    # Room for size x cpu on this machine's one engine (the scheduler's bookkeeping
    # would otherwise stop at the number of cores).
    config = Config({"ClusterManager": {"agents": [{"id": "local", "cpu": 1024}]}})
    km = AsyncKernelManager(kernel_name=f"bench-{size}", config=config)
    client = None
    start = time.monotonic()
    try:
        await km.start_kernel()
        client = km.client()
        client.start_channels()
        await client.wait_for_ready(timeout=args.timeout)
        return time.monotonic() - start
    finally:
        if client is not None:
            client.stop_channels()
        if km.has_kernel:
            await km.shutdown_kernel(now=True)


# -- the run -------------------------------------------------------------------------


def leftovers(labels: list[str]) -> list[str]:
    """Containers and networks still carrying any of ``labels`` (per the docker CLI)."""
    found = []
    for label in labels:
        for kind in (("ps", "-aq"), ("network", "ls", "-q")):
            out = subprocess.run(
                ["docker", *kind, "--filter", f"label={label}"],
                capture_output=True,
                text=True,
                check=True,
            ).stdout
            found += out.split()
    return found


def force_clean(ids: list[str]) -> None:
    """Remove containers (or networks) by id, ignoring what is already gone."""
    for object_id in ids:
        subprocess.run(["docker", "rm", "-f", "-v", object_id], capture_output=True, check=False)
        subprocess.run(["docker", "network", "rm", object_id], capture_output=True, check=False)


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
    left = leftovers([f"{BENCH_LABEL}={run_id}", f"{MANAGER_LABEL}={manager_id}"])
    if left:
        force_clean(left)
        raise SystemExit(f"the benchmark left Docker objects behind (removed now): {left}")
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
