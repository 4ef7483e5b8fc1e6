"""What Docker's own create and start cost per container: the bound under both launch slopes.

Run as ``.venv/bin/python bench/bench_docker_start.py [--sizes 1,4,16] [--repeat 4]``.

A diagnostic for issue #27 item 4 (the launch slope), not a goal (``bench/run.py``
does not run it). ``bench_launch.py`` (a) compares ours with a floor of bare
containers; both create and start N containers on a network of their own. This
measures those two calls alone: N containers of the kernel image running ``sleep``
(nothing inside to get ready), created concurrently with aiodocker, then started
concurrently, each phase timed until its last call has returned (Docker answers a
start once the container runs). Three
networks, alternating: ``user`` (a fresh user-defined bridge, as a session and the
floor use; Docker gives each container its embedded DNS there), ``bridge`` (Docker's
default bridge: no embedded DNS, no session of its own) and ``none`` (no network at
all). Prints the median start, and create plus start, per network and size, and
each network's least-squares slopes over sizes (seconds per extra container), to set
beside ``bench_launch.py``'s slopes: the part of them no launch on that network can
avoid.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
import uuid
from typing import Any

from common.constants import BENCH_LABEL, IMAGE
from common.harness import progress, slope
from common.sandbox import add_run_id, check_nothing_left

#: The networks measured: a session's kind first.
NETWORKS = ("user", "bridge", "none")


def sleeper(image: str, run_id: str, network: str) -> dict[str, Any]:
    """The create body of one container that only sleeps, on ``network``."""
    return {
        "Image": image,
        "Entrypoint": ["sleep", "600"],
        "Cmd": [],
        "Labels": {BENCH_LABEL: run_id},
        "HostConfig": {"NetworkMode": network},
    }


async def start_once(
    docker: Any, image: str, run_id: str, network: str, size: int
) -> tuple[float, float]:
    """Seconds to create ``size`` containers at once on ``network`` (``user``: a fresh
    network made and removed around it, untimed), and then to start them at once;
    everything is removed."""
    made = None
    if network == "user":
        name = f"jc-bench-start-{run_id}-{uuid.uuid4().hex[:6]}"
        made = await docker.networks.create(
            {"Name": name, "Driver": "bridge", "Labels": {BENCH_LABEL: run_id}}
        )
        network = made.id
    containers: list[Any] = []
    try:
        began = time.monotonic()
        containers = list(
            await asyncio.gather(
                *(docker.containers.create(sleeper(image, run_id, network)) for _ in range(size))
            )
        )
        created = time.monotonic()
        await asyncio.gather(*(c.start() for c in containers))
        return created - began, time.monotonic() - created
    finally:
        await asyncio.gather(*(c.delete(force=True) for c in containers), return_exceptions=True)
        if made is not None:
            await made.delete()


#: Seconds of each run, by (phase, network, size); phases ``start`` and ``both``.
Took = dict[tuple[str, str, int], list[float]]


async def measure(args: argparse.Namespace) -> Took:
    """Alternating runs (networks in turn, their order reversed every other round)."""
    import aiodocker

    took: Took = {}
    docker = aiodocker.Docker()
    try:
        for size in args.sizes:
            for round_ in range(args.repeat):
                order = NETWORKS if round_ % 2 == 0 else NETWORKS[::-1]
                for network in order:
                    create, start = await start_once(docker, args.image, args.run_id, network, size)
                    took.setdefault(("start", network, size), []).append(start)
                    took.setdefault(("both", network, size), []).append(create + start)
                    progress(f"size {size} {network}: create {create:.3f} s, start {start:.3f} s")
    finally:
        await docker.close()
    return took


#: How each phase is named in the report.
PHASES = {"start": "start", "both": "create+start"}


def report(took: Took, sizes: list[int]) -> list[str]:
    """Lines: per phase, the median per network and size, then (several sizes) each
    network's slope over the sizes (from the medians) and its excess over ``none``."""
    lines = []
    for phase, label in PHASES.items():
        for network in NETWORKS:
            medians = [statistics.median(took[(phase, network, size)]) for size in sizes]
            cells = "  ".join(f"{s}: {m:.3f} s" for s, m in zip(sizes, medians, strict=True))
            lines.append(f"{label:12} {network:6} {cells}")
        if len(sizes) < 2:
            continue
        slopes = {
            n: slope(sizes, [statistics.median(took[(phase, n, s)]) for s in sizes])
            for n in NETWORKS
        }
        for network in NETWORKS:
            extra = slopes[network] - slopes["none"]
            lines.append(
                f"{label:12} {network:6} slope {slopes[network]:.3f} s per container"
                f" ({extra:+.3f} s over none)"
            )
    return lines


def main(argv: list[str] | None = None) -> int:
    """Measure and print medians and slopes; fail if anything of the run is left."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sizes",
        type=lambda text: [int(s) for s in text.split(",")],
        default=[1, 4, 16],
        help="containers started at once, comma-separated",
    )
    parser.add_argument("--repeat", type=int, default=4, help="runs per network and size")
    parser.add_argument("--image", default=IMAGE)
    add_run_id(parser)
    args = parser.parse_args(argv)
    try:
        took = asyncio.run(measure(args))
    finally:
        check_nothing_left([f"{BENCH_LABEL}={args.run_id}"])
    print(f"N sleeping containers created, then started, at once; median of {args.repeat} runs")
    print("\n".join(report(took, args.sizes)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
