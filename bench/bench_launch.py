"""Launch, terminate and concurrent launches against bare containers (issue #13, 1a 1b 1f).

Run as ``.venv/bin/python bench/bench_launch.py [--sizes 1,2,4,8,16] [--repeat 3] [--quick]``.

Both sides use the same image and the same limits per container: ``--cpu`` CPUs
(default 1; ``auto`` = the machine's CPUs / size, so the agent would fit without
extra room) and ``--mem`` memory (swap equal to it). The manager's local agent is
configured with room for every size (``cpu: 1024``, as in bench_kernel_start.py).

(a) launch to ready, sizes ``--sizes`` (1, 2, 4, 8, 16).
    ours: ``AsyncKernelManager(kernel_name=<cluster kernelspec of size N>)``
    ``.start_kernel()`` (it returns once the session is RUNNING: every container's
    sshd listens), then, concurrently, a ``kernel_info`` reply and (size > 1; size 1
    has no sub) ``ssh sub<N-1> true`` run in main1 through ``ClusterManager.exec``
    (docker exec) exiting 0. Timed from the start_kernel call.
    floor: a fresh user-defined bridge network; N bare containers created, given
    their files with one ``put_archive`` each (a host key and root's authorized
    key; main1 also the client key and the kernel's connection file; all made
    before the run) and started, concurrently, with aiodocker. Each runs the
    image's own sshd on port 2200; main1 also ``python3 -m ipykernel_launcher``
    with its five ports published on 127.0.0.1. Timed from the first API call
    until the kernel answers ``kernel_info``, every container's sshd sends its
    banner to a TCP connect from this host (polled every 20 ms) and then (size >
    1) ``ssh -p 2200 sub<N-1> true`` run in main1 (docker exec) exits 0. This is
    the least any implementation needs for the same result; it has none of what
    ours adds: per-session keys, hardening (``--init``, dropped capabilities, PID
    limit, no-new-privileges, log rotation), the published SSH port, the start-up
    script, the store, the kernel started by ``docker exec``.
    Goal (issue #27, 4): ours/floor <= 1.05 at every size. Extra row: the
    least-squares slope over sizes (seconds per extra container) of each side,
    one per repeat; goal: ours no steeper than the floor's.
(b) terminate to gone, sizes ``--term-sizes`` (1, 4, 16): a session launched with
    ``ClusterManager.launch`` (untimed), then ``ClusterManager.terminate`` timed
    until it returns (every container and the network removed; checked after).
    floor: the same bare containers (sshd in each; the first publishing what
    ours' main1 publishes: port 2200 and the five kernel ports, since each
    published port costs Docker ~45 ms to undo) on their own network, started
    untimed, then removed concurrently (``force``, with volumes), then the
    network. Goal <= 1.2. Also, from every run of (a): ``shutdown_kernel()`` of
    the cluster kernel in a script (the kernel's own graceful shutdown, the subs
    removed meanwhile, then main1 and the network) against removing (a)'s floor
    containers and network. Goal <= 1.2 (issue 27, item 2).
(l) ``--log-size`` (4): what keeping the containers' log tails adds to that
    ``shutdown_kernel``: the same launch and shutdown, alternating with
    ``ClusterManager.keep_logs = False`` as the floor. Goal <= 1.10.
(f) ``--launches`` (10) concurrent size-2 ``ClusterManager.launch`` calls of one
    manager until all are RUNNING, against 2 x launches bare containers started
    at once in ``--launches`` networks (as in (b): sshd in each, the first of each
    pair publishing ours' ports) until every sshd answers. Goal <= 1.25.

Everything runs in temporary Jupyter dirs (common.sandbox.jupyter_dirs); every
container and network made is removed and the script fails if any is left.
"""

from __future__ import annotations

import argparse
import os
import sys
import uuid
from functools import partial
from typing import Any

from common import harness
from common.bare import floor_keys
from common.constants import BENCH_LABEL, IMAGE, MANAGER_LABEL
from common.floors import Floor
from common.harness import logged
from common.kernels import (
    cluster_config,
    install_kernelspec,
    ours_launch,
    ours_many,
    ours_terminate,
)
from common.sandbox import check_nothing_left, jupyter_dirs, store_manager_id

NAME = "launch"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options (``--quick``: sizes 1,2, one repeat, 2 concurrent launches)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1,2,4,8,16", help="(a) sizes, comma-separated")
    parser.add_argument("--term-sizes", default="1,4,16", help="(b) sizes, comma-separated")
    parser.add_argument("--launches", type=int, default=10, help="(f) concurrent launches")
    parser.add_argument("--repeat", type=int, help="runs of each kind per case (default 3)")
    parser.add_argument("--cpu", default="1", help="CPUs per container, or auto (CPUs/size)")
    parser.add_argument("--mem", default="256m", help="memory per container (both kinds)")
    parser.add_argument("--image", default=IMAGE)
    parser.add_argument("--timeout", type=float, default=180.0, help="seconds per start")
    parser.add_argument("--log-size", type=int, default=4, help="(l) the session's size")
    parser.add_argument("--only", default="a,b,f,l", help="cases to run, comma-separated")
    parser.add_argument("--quick", action="store_true", help="a small, fast variant")
    args = parser.parse_args(argv)
    if args.quick:
        args.sizes, args.term_sizes, args.launches, args.log_size = "1,2", "1", 2, 2
    args.repeat = args.repeat or (1 if args.quick else 3)
    args.sizes = [int(s) for s in str(args.sizes).split(",") if s.strip()]
    args.term_sizes = [int(s) for s in str(args.term_sizes).split(",") if s.strip()]
    args.only = set(str(args.only).split(","))
    return args


def cpu_for(args: argparse.Namespace, size: int) -> float:
    """CPUs per container at ``size``: ``--cpu``, or the machine's CPUs / size."""
    from jupyter_cluster.core.units import parse_cpu

    if args.cpu == "auto":
        return (os.cpu_count() or 1) / size
    return parse_cpu(args.cpu, "cpu")


async def case_a(args: argparse.Namespace, root: str, floor: Floor) -> list[dict[str, Any]]:
    """(a) launch to ready per size, the slopes, and (b) shutdown_kernel per size."""
    rows, per_size = [], {}
    for size in args.sizes:
        cpu = cpu_for(args, size)
        install_kernelspec(root, args.timeout, image=args.image, size=size, cpu=cpu, mem=args.mem)
    first = args.sizes[0]  # warm-up: imports, page cache, the store
    await ours_launch(f"bench-{first}", first, args.timeout, [])
    try:
        await floor.launch(first, cpu_for(args, first))
    finally:
        await floor.remove()
    for size in args.sizes:
        cpu = cpu_for(args, size)
        shutdowns: list[float] = []
        removals: list[float] = []

        async def bare(size: int = size, cpu: float = cpu, removals: list = removals) -> float:
            try:
                return await floor.launch(size, cpu)
            finally:
                removals.append(await floor.remove())

        ours, base = await harness.alternate(
            args.repeat,
            logged(
                f"a size {size} ours",
                partial(ours_launch, f"bench-{size}", size, args.timeout, shutdowns),
            ),
            logged(f"a size {size} floor", bare),
        )
        per_size[size] = (ours, base)
        note = f"cpu {cpu:g}, mem {args.mem} per container"
        case = f"a: launch to ready, size {size}"
        rows.append(harness.result(NAME, case, "seconds", ours, base, goal=1.05, note=note))
        case, note = f"b: shutdown_kernel, size {size}", "floor: removing (a)'s bare containers"
        rows.append(harness.result(NAME, case, "seconds", shutdowns, removals, goal=1.2, note=note))
    if len(per_size) >= 2:
        sizes = list(per_size)
        slopes = [
            [
                harness.slope(sizes, [per_size[s][kind][i] for s in sizes])
                for i in range(args.repeat)
            ]
            for kind in (0, 1)
        ]
        case = f"a: slope over sizes {','.join(map(str, sizes))}"
        note = "least squares, one per repeat; goal: no steeper than the floor's"
        row = harness.result(NAME, case, "s per container", *slopes, goal=1.0, note=note)
        row["met"] = row["ours_median"] <= row["floor_median"]  # also for slopes <= 0
        rows.append(row)
    return rows


async def case_b_f(args: argparse.Namespace, floor: Floor) -> list[dict[str, Any]]:
    """(b) ClusterManager.terminate to gone, and (f) concurrent size-2 launches."""
    from jupyter_cluster.engine.manager import ClusterManager

    rows = []
    manager = ClusterManager(config=cluster_config())
    try:
        await manager.start()
        for size in args.term_sizes if "b" in args.only else ():
            cpu = cpu_for(args, size)
            spec = manager.make_spec(image=args.image, size=size, cpu=cpu, mem=floor.mem)

            async def bare(size: int = size, cpu: float = cpu) -> float:
                try:
                    await floor.many(1, size, cpu)
                except BaseException:
                    await floor.remove()
                    raise
                return await floor.remove()

            ours, base = await harness.alternate(
                args.repeat,
                logged(f"b size {size} ours", partial(ours_terminate, manager, spec)),
                logged(f"b size {size} floor", bare),
            )
            case = f"b: terminate to gone, size {size}"
            rows.append(harness.result(NAME, case, "seconds", ours, base, goal=1.2))
        if "f" in args.only:
            cpu, n = cpu_for(args, 2), args.launches
            pair = manager.make_spec(image=args.image, size=2, cpu=cpu, mem=floor.mem)

            async def many() -> float:
                try:
                    return await floor.many(n, 2, cpu)
                finally:
                    await floor.remove()

            ours, base = await harness.alternate(
                args.repeat,
                logged("f ours", partial(ours_many, manager, n, pair)),
                logged("f floor", many),
            )
            case, note = f"f: {n} concurrent size-2 launches", f"floor: {2 * n} bare, {n} networks"
            rows.append(harness.result(NAME, case, "seconds", ours, base, goal=1.25, note=note))
    finally:
        await floor.remove()
        await manager.close()
    return rows


async def case_l(args: argparse.Namespace, root: str) -> list[dict[str, Any]]:
    """(l) ``shutdown_kernel`` with the log tails kept against the same without."""
    size = args.log_size
    name = f"bench-logs-{size}"
    cpu = cpu_for(args, size)
    install_kernelspec(root, args.timeout, name, image=args.image, size=size, cpu=cpu, mem=args.mem)
    unkept = cluster_config()
    unkept["ClusterManager"]["keep_logs"] = False
    kept: list[float] = []
    skipped: list[float] = []
    await harness.alternate(
        args.repeat,
        logged(f"l size {size} logs kept", partial(ours_launch, name, size, args.timeout, kept)),
        logged(
            f"l size {size} logs not kept",
            partial(ours_launch, name, size, args.timeout, skipped, unkept),
        ),
    )
    case = f"l: shutdown_kernel, size {size}, log tails kept"
    note = "floor: the same with ClusterManager.keep_logs = False"
    return [harness.result(NAME, case, "seconds", kept, skipped, goal=1.10, note=note)]


async def run(args: argparse.Namespace) -> list[dict[str, Any]]:
    """Every case asked for (``--only``); fails if a Docker object is left behind."""
    import aiodocker

    from jupyter_cluster.core.units import parse_size

    run_id = uuid.uuid4().hex[:12]
    with jupyter_dirs() as root:
        manager_id = store_manager_id()
        docker = aiodocker.Docker()
        mem = parse_size(args.mem, "mem")
        floor = Floor(docker, args, run_id, mem, floor_keys())
        try:
            rows = await case_a(args, root, floor) if "a" in args.only else []
            if args.only & {"b", "f"}:
                rows += await case_b_f(args, floor)
            if "l" in args.only:
                rows += await case_l(args, root)
        finally:
            await floor.remove_run()
            await docker.close()
        check_nothing_left([f"{BENCH_LABEL}={run_id}", f"{MANAGER_LABEL}={manager_id}"])
    return rows


def main(argv: list[str] | None = None) -> int:
    """Measure, print the table, write ``bench/results/launch[_quick].json``."""
    return harness.main_of(NAME, parse_args, run, argv)


if __name__ == "__main__":
    sys.exit(main())
