"""Our cluster provisioner at size 1 beside gateway_provisioners' DockerProvisioner (issue #13, 2).

Run as ``.venv/bin/python bench/bench_gateway.py [--gateway-python PY] [--repeat 5] [--quick]``.

gateway_provisioners is not a dependency of the project: install it in an
environment of its own (``python -m venv DIR && DIR/bin/pip install
'gateway_provisioners[docker]'``) and pass that Python (``--gateway-python``, or
$JC_BENCH_GATEWAY_PYTHON). Without it, its column is skipped with a message saying
so and only ours and the floors are measured.

Three kernels of one container each, every one with ``--cpu`` CPUs and ``--mem``
memory (swap equal to it), the same image underneath:

ours
    ``AsyncKernelManager`` of a size-1 cluster kernelspec (a whole session: store,
    keys, network, the container with sshd, the kernel as ``work`` in main1,
    reached over SSH to Unix sockets, the default ``kernel_transport``).
gateway_provisioners
    ``AsyncKernelManager`` of a ``DockerProvisioner`` kernelspec made by its
    ``jupyter-docker-spec install``, in a process of its own (``gateway/worker.py``,
    run by its Python); its launcher ``docker run``\\ s an image built from ours
    with its kernel launcher added (``gateway.peer.build_image``), on the default
    bridge, and the kernel sends its connection info back to the provisioner. Its
    launcher has no CPU/memory options: ``gateway/launch.py`` adds ours to its
    ``docker run``.
floor
    a bare container of our image on the default bridge running ``python3 -m
    ipykernel_launcher`` with its connection file put in before start, reached on
    the container's address (``common.floors.BareKernel``; aiodocker only).

Measured, alternating (the order rotates every repeat), after one untimed run of each:

- start → ``kernel_info`` reply, each against the floor's, and ours against
  gateway_provisioners';
- ``shutdown_kernel()`` until it returns (ours as in a server: the kernel was
  asked to end, its exit and the removal go on in the background; gateway_provisioners:
  also until its container is gone, which its ``shutdown_requested`` force-removes),
  each against removing the
  floor's container (``force``), and ours against gateway_provisioners' (the
  issue's goal: no slower, ratio <= 1.0);
- an empty cell's round trip (``--calls`` 200, one call of each kind in turn, the
  order rotating; median and p95) from this process's client, each against a local
  ipykernel's (the floor of ``bench_io.py`` (d)), and ours against theirs.

Ours' start, shutdown and empty-cell rows also carry theirs (``harness.beside``), as
the tables show it; the ``ours vs gateway_provisioners`` rows stay in the JSON, marked
``shown_as_peer``, and the tables leave them out.

Everything runs in temporary Jupyter dirs; every container and network made is
removed and the script fails if any is left.
"""

from __future__ import annotations

import argparse
import sys
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from common import harness
from common.constants import BENCH_LABEL, IMAGE, MANAGER_LABEL
from common.floors import BareKernel
from common.harness import log
from common.kernels import (
    client_of,
    cluster_config,
    install_kernelspec,
    ours_launch,
    round_trip,
    start_kernel,
    stop_kernel,
)
from common.sandbox import (
    check_nothing_left,
    jupyter_dirs,
    remove_bench_containers,
    store_manager_id,
)
from gateway import peer

NAME = "gateway"
GP = "gateway_provisioners"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options (``--quick``: one repeat, 20 calls)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, help="starts/shutdowns of each kind (default 5)")
    parser.add_argument("--calls", type=int, help="empty cells of each kind (default 200)")
    parser.add_argument("--cpu", default="1", help="CPUs of each kernel's container")
    parser.add_argument("--mem", default="512m", help="memory of each kernel's container")
    parser.add_argument(
        "--image", default=IMAGE, help="ours and the floor's; theirs is built on it"
    )
    parser.add_argument(
        "--gateway-python",
        default=peer.default_gateway_python(),
        help="the Python of an environment with gateway_provisioners[docker] "
        "(default: $JC_BENCH_GATEWAY_PYTHON, or this one if it has it)",
    )
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per start")
    parser.add_argument("--quick", action="store_true", help="a small, fast variant")
    args = parser.parse_args(argv)
    args.repeat = args.repeat or (1 if args.quick else 5)
    args.calls = args.calls or (20 if args.quick else 200)
    return args


async def rotate(repeat: int, runs: dict[str, Callable[[], Awaitable[None]]]) -> None:
    """Call each run ``repeat`` times, one of each in turn, the first one rotating."""
    names = list(runs)
    for i in range(repeat):
        k = i % len(names)
        for name in names[k:] + names[:k]:
            await runs[name]()


async def lifecycle(
    args: argparse.Namespace, docker: Any, worker: peer.GatewayWorker | None, run_id: str
) -> list[dict[str, Any]]:
    """Start → kernel_info and shutdown_kernel of each kind; their rows."""
    from jupyter_cluster.core.units import parse_cpu, parse_size

    cpu, mem = parse_cpu(args.cpu, "cpu"), parse_size(args.mem, "mem")
    samples: dict[str, list[float]] = {
        k: [] for k in ("ours", "ours_down", "gp", "gp_down", "gp_gone", "floor", "floor_down")
    }

    async def ours() -> None:
        from jupyter_cluster.provisioning.endings import wait_for_endings

        down: list[float] = []
        # As in a Jupyter server (the extension's default there): shutdown_kernel returns
        # once the kernel was asked to end; its exit, then removing the containers, go
        # on in the background (awaited below, untimed).
        config = cluster_config()
        config.ClusterProvisioner.end_session_in_background = True
        samples["ours"].append(await ours_launch("bench-1", 1, args.timeout, down, config))
        samples["ours_down"] += down
        await wait_for_endings()  # not timed: the next run starts on a quiet engine
        log(f"ours: start {samples['ours'][-1]:.3f} s, shutdown {down[0]:.3f} s")

    async def gateway() -> None:
        assert worker is not None
        started = await worker.call(cmd="start", kernel=peer.KERNEL_NAME, timeout=args.timeout)
        down = await worker.call(cmd="shutdown")
        samples["gp"].append(started["seconds"])
        samples["gp_down"].append(down["seconds"])
        samples["gp_gone"].append(down["gone"])
        log(f"{GP}: start {started['seconds']:.3f} s, shutdown {down['seconds']:.3f} s")

    async def floor() -> None:
        bare = BareKernel(docker, args.image, cpu, mem, run_id)
        try:
            samples["floor"].append(await bare.start(args.timeout))
        finally:
            samples["floor_down"].append(await bare.remove())
        log(f"floor: start {samples['floor'][-1]:.3f} s, remove {samples['floor_down'][-1]:.3f} s")

    runs = {"ours": ours, "floor": floor, **({"gp": gateway} if worker else {})}
    await rotate(1, runs)  # warm-up: imports, page cache, the store, their response socket
    for values in samples.values():
        values.clear()
    await rotate(args.repeat, runs)
    s = samples
    note = f"cpu {args.cpu}, mem {args.mem}; floor: a bare ipykernel container"
    start, down = "start → kernel_info", "shutdown_kernel"
    rows = [harness.result(NAME, f"{start}, ours size 1", "seconds", s["ours"], s["floor"])]
    rows.append(
        harness.result(
            NAME,
            f"{down}, ours size 1",
            "seconds",
            s["ours_down"],
            s["floor_down"],
            note="floor: removing the bare container",
        )
    )
    if worker is not None:
        # Theirs beside ours; the "ours vs" rows below say the same (for the JSON's readers).
        harness.beside(rows[0], GP, s["gp"], goal=1.0)  # issue #27: no slower than theirs
        harness.beside(rows[1], GP, s["gp_down"], goal=1.0)
        rows += [
            harness.result(NAME, f"{start}, {GP}", "seconds", s["gp"], s["floor"], note=note),
            harness.result(
                NAME,
                f"{start}, ours vs {GP}",
                "seconds",
                s["ours"],
                s["gp"],
                note=f"floor column: {GP}",
                shown_as_peer=True,
            ),
            harness.result(NAME, f"{down}, {GP}", "seconds", s["gp_down"], s["floor_down"]),
            harness.result(
                NAME,
                f"{down} to gone, {GP}",
                "seconds",
                s["gp_gone"],
                s["floor_down"],
                note="until its container no longer exists",
            ),
            harness.result(
                NAME,
                f"{down}, ours vs {GP}",
                "seconds",
                s["ours_down"],
                s["gp_down"],
                goal=1.0,
                note=f"floor column: {GP}; goal: no slower",
                shown_as_peer=True,
            ),
        ]
    return rows


async def cells(
    args: argparse.Namespace, worker: peer.GatewayWorker | None
) -> list[dict[str, Any]]:
    """An empty cell's round trip on each kind of kernel, interleaved; median and p95 rows."""
    clients: dict[str, Any] = {}
    managers: list[tuple[Any, Any]] = []
    try:
        local = await start_kernel("python3")
        managers.append(local)
        ours = await start_kernel("bench-1", cluster_config("direct"), args.timeout)
        managers.append(ours)
        clients["floor"], clients["ours"] = local[1], ours[1]
        if worker is not None:
            started = await worker.call(cmd="start", kernel=peer.KERNEL_NAME, timeout=args.timeout)
            clients["gp"] = client_of(started["connection"])
        for _ in range(5):  # warm-up: the first cells import and compile
            for client in clients.values():
                await round_trip(client)
        samples: dict[str, list[float]] = {k: [] for k in clients}

        def one(kind: str) -> Callable[[], Awaitable[None]]:
            async def call() -> None:
                samples[kind].append(await round_trip(clients[kind]))

            return call

        await rotate(args.calls, {k: one(k) for k in clients})
    finally:
        if "gp" in clients:
            clients["gp"].stop_channels()
            await worker.call(cmd="shutdown")  # type: ignore[union-attr]
        for km, client in managers:
            await stop_kernel(km, client)
    rows = []
    note = f"{args.calls} calls; floor: local ipykernel"
    kinds = [("ours size 1", "ours", "floor")]
    if "gp" in samples:
        kinds += [(GP, "gp", "floor"), (f"ours vs {GP}", "ours", "gp")]
    for label, mine, base in kinds:
        case = f"empty cell, {label}"
        vs_gp = base != "floor"
        text = f"{args.calls} calls; floor column: {GP}" if vs_gp else note
        median = harness.result(
            NAME, case, "median", samples[mine], samples[base], note=text, shown_as_peer=vs_gp
        )
        p95 = [harness.percentile(samples[mine], 95)], [harness.percentile(samples[base], 95)]
        rows += [median, harness.result(NAME, case, "p95", *p95, note=text, shown_as_peer=vs_gp)]
        if mine == "ours" and not vs_gp and "gp" in samples:
            harness.beside(median, GP, samples["gp"])
            harness.beside(rows[-1], GP, [harness.percentile(samples["gp"], 95)])
    return rows


async def run(args: argparse.Namespace) -> list[dict[str, Any]]:
    """Every measurement; fails if a Docker object is left behind."""
    import aiodocker

    from jupyter_cluster.core.units import parse_cpu, parse_size

    run_id = uuid.uuid4().hex[:12]
    with jupyter_dirs() as root:
        manager_id = store_manager_id()
        shape = {"image": args.image, "cpu": args.cpu, "mem": args.mem}
        install_kernelspec(root, args.timeout, size=1, **shape)
        package, why = peer.find_gateway(args.gateway_python)
        worker = None
        if package:
            log(f"building {peer.GATEWAY_IMAGE} on {args.image} with {GP}' kernel launcher")
            peer.build_image(package, args.image)
            cpu, mem = parse_cpu(args.cpu, "cpu"), parse_size(args.mem, "mem")
            label = f"{BENCH_LABEL}={run_id}"
            peer.install_kernelspec(args.gateway_python, root, peer.GATEWAY_IMAGE, cpu, mem, label)
            worker = peer.GatewayWorker(args.gateway_python)
            await worker.open()
        else:
            print(f"{GP} column skipped: {why}", flush=True)
        docker = aiodocker.Docker()
        try:
            rows = await lifecycle(args, docker, worker, run_id)
            rows += await cells(args, worker)
        finally:
            if worker is not None:
                await worker.close()
            await remove_bench_containers(docker, run_id)
            await docker.close()
        check_nothing_left([f"{BENCH_LABEL}={run_id}", f"{MANAGER_LABEL}={manager_id}"])
    return rows


def main(argv: list[str] | None = None) -> int:
    """Measure, print the table, write ``bench/results/gateway[_quick].json``."""
    return harness.main_of(NAME, parse_args, run, argv)


if __name__ == "__main__":
    sys.exit(main())
