"""A launch that takes warm containers against the cold floor (issue #13, item 5).

Run as ``.venv/bin/python bench/bench_warm.py [--size 4] [--repeat 3] [--quick]``.

ours (warm): ``ClusterManager.warm_pool`` holds ``--size`` containers of the launch's
    shape (``--cpu``, ``--mem``), filled by a manager in this process before each run
    (untimed, as the server refills it in the background). Then, exactly as
    bench_launch.py's case (a): ``AsyncKernelManager.start_kernel()`` of a cluster
    kernelspec of that size and shape, until the kernel answers ``kernel_info`` and
    ``ssh <last sub> true`` run in main1 exits 0.
floor: bench_launch.py's cold floor: the same number of bare containers of the same
    image and limits created, given their files and started concurrently with
    aiodocker, sshd in each, ipykernel in the first; until the same answers.
Goal: ours/floor < 0.5 (under half the cold floor). An extra row puts the same warm
launch against ours cold (no pool), for how much the pool saves.
"""

from __future__ import annotations

import argparse
import sys
import uuid
from functools import partial
from typing import Any

from common import harness
from common.bare import floor_keys
from common.constants import BENCH_LABEL, IMAGE, MANAGER_LABEL
from common.floors import Floor
from common.harness import logged
from common.kernels import cluster_config, install_kernelspec, ours_launch
from common.sandbox import jupyter_dirs, leftovers, store_manager_id

NAME = "warm"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options (``--quick``: size 2, one repeat)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=4, help="cluster size")
    parser.add_argument("--repeat", type=int, help="runs of each kind (default 5)")
    parser.add_argument("--cpu", default="1", help="CPUs per container")
    parser.add_argument("--mem", default="256m", help="memory per container")
    parser.add_argument("--image", default=IMAGE)
    parser.add_argument("--timeout", type=float, default=180.0, help="seconds per start")
    parser.add_argument("--quick", action="store_true", help="a small, fast variant")
    args = parser.parse_args(argv)
    if args.quick:
        args.size = 2
    args.repeat = args.repeat or (1 if args.quick else 5)
    return args


def warm_config(args: argparse.Namespace) -> Any:
    """The kernel manager's config: cluster_config() plus a pool of the launch's shape."""
    pool = [{"image": args.image, "cpu": float(args.cpu), "mem": args.mem, "size": args.size}]
    config = cluster_config()
    config.ClusterManager.warm_pool = pool
    return config


async def run(args: argparse.Namespace) -> list[dict[str, Any]]:
    """Warm vs the cold floor and vs ours cold; fails if a Docker object is left."""
    import aiodocker

    from jupyter_cluster.core.units import parse_cpu, parse_size
    from jupyter_cluster.engine.manager import ClusterManager

    run_id = uuid.uuid4().hex[:12]
    args.sizes, size, cpu = [args.size], args.size, float(args.cpu)
    with jupyter_dirs() as root:
        manager_id = store_manager_id()
        shape = {"image": args.image, "cpu": parse_cpu(args.cpu, "cpu"), "mem": args.mem}
        for n in {1, size}:
            install_kernelspec(root, args.timeout, size=n, **shape)
        config = warm_config(args)
        keeper = ClusterManager(config=config)
        docker = aiodocker.Docker()
        floor = Floor(docker, args, run_id, parse_size(args.mem, "mem"), floor_keys())

        async def warm() -> float:
            await keeper.warm.fill()
            if len(keeper.warm.table.ready()) != 1:
                raise RuntimeError("the pool does not hold its one warm set")
            seconds = await ours_launch(f"bench-{size}", size, args.timeout, [], config)
            if keeper.warm.table.ready():
                raise RuntimeError("the launch did not take the warm set")
            return seconds

        async def bare() -> float:
            try:
                return await floor.launch(size, cpu)
            finally:
                await floor.remove()

        try:
            # warm-up: imports, page cache, the store
            await ours_launch("bench-1", 1, args.timeout, [])
            warm_runs, floor_runs = await harness.alternate(
                args.repeat, logged("warm", warm), logged("floor", bare)
            )
            warm_again, cold_runs = await harness.alternate(
                args.repeat,
                logged("warm", warm),
                logged("ours cold", partial(ours_launch, f"bench-{size}", size, args.timeout, [])),
            )
        finally:
            await keeper.warm.drain()
            await keeper.close()
            await floor.remove_run()
            await docker.close()
        left = leftovers([f"{BENCH_LABEL}={run_id}", f"{MANAGER_LABEL}={manager_id}"])
    if left:
        raise SystemExit(f"the benchmark left Docker objects behind: {left}")
    note = f"size {size}, cpu {cpu:g}, mem {args.mem} per container"
    return [
        harness.result(
            NAME,
            f"warm launch to ready vs cold floor, size {size}",
            "seconds",
            warm_runs,
            floor_runs,
            goal=0.5,
            note=note,
        ),
        harness.result(
            NAME,
            f"warm launch to ready vs ours cold, size {size}",
            "seconds",
            warm_again,
            cold_runs,
            note=note,
        ),
    ]


def main(argv: list[str] | None = None) -> int:
    """Measure, print the table, write ``bench/results/warm[_quick].json``."""
    return harness.main_of(NAME, parse_args, run, argv)


if __name__ == "__main__":
    sys.exit(main())
