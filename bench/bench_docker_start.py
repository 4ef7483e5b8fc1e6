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

A fourth kind, ``session``, is a fresh user-defined bridge with containers made as
the engine makes a sub: the host configuration of sub2 of a size-3 session launched
(untimed, before the runs) with ``ClusterManager`` and inspected, so its limits, init,
dropped capabilities, ``no-new-privileges``, PID limit, log rotation and the
read-only mount of a volume (a fresh one per run, as a session's start-up files
volume). Against ``user`` it shows what the engine's way of making a container adds
to Docker's own start of it; only ``--sizes`` and ``--repeat`` are shared.

A fifth kind, ``followed``, is ``session`` with each container's log followed from
the moment its start returns, as the engine follows a container's log to see it
ready, until the line every container here prints first: whether those streams slow
Docker's other starts (the floor of ``bench_launch.py`` follows none).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
import uuid
from typing import Any

from common.constants import BENCH_LABEL, IMAGE, MANAGER_LABEL
from common.harness import progress, slope
from common.sandbox import add_run_id, check_nothing_left, jupyter_dirs, store_manager_id

#: The kinds measured: a session's network first; ``session`` is a sub's making on it,
#: ``followed`` the same with each container's log followed once it started.
NETWORKS = ("user", "session", "followed", "bridge", "none")
#: The kind each of these is also set beside in the report: what it adds to it.
COMPARED = {"session": "user", "followed": "session"}
#: What each container prints before it sleeps; ``followed`` reads it.
SAID = "up"
#: The sub whose host configuration ``session`` copies, and its session's size.
SUB, SUB_SESSION_SIZE = "sub2", 3


def sleeper(
    image: str, run_id: str, network: str, host_config: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The create body of one container that says :data:`SAID` and then sleeps, on
    ``network``, with ``host_config`` (else none) under the network."""
    return {
        "Image": image,
        "Entrypoint": ["sh", "-c", f"echo {SAID}; exec sleep 600"],
        "Cmd": [],
        "Labels": {BENCH_LABEL: run_id},
        "HostConfig": {**(host_config or {}), "NetworkMode": network},
    }


async def sub_host_config(docker: Any, image: str) -> dict[str, Any]:
    """The host configuration the engine gives :data:`SUB`, read from a session
    launched with ``ClusterManager`` (0.5 CPU, 256 MiB each) and terminated again;
    without its network, and with each volume mount's source left to fill in."""
    from common.kernels import cluster_config

    from jupyter_cluster.engine.manager import ClusterManager

    manager = ClusterManager(config=cluster_config())
    await manager.start()
    try:
        spec = manager.make_spec(image=image, size=SUB_SESSION_SIZE, cpu=0.5, mem="256m")
        session = await manager.launch(spec)
        try:
            (sub,) = (c for c in session.containers if c.host == SUB)
            found = await docker.containers.get(sub.container_id)
            host_config = dict(found["HostConfig"])
        finally:
            await manager.terminate(session.id)
    finally:
        await manager.close()
    host_config.pop("NetworkMode", None)
    if not any(m.get("Type") == "volume" for m in host_config.get("Mounts") or ()):
        raise RuntimeError(f"{SUB} of a size-{SUB_SESSION_SIZE} session mounts no volume")
    return host_config


def with_volume(host_config: dict[str, Any], volume: str) -> dict[str, Any]:
    """``host_config`` with its volume mounts' source set to ``volume``."""
    mounts = [
        {**m, "Source": volume} if m.get("Type") == "volume" else m
        for m in host_config.get("Mounts") or ()
    ]
    return {**host_config, "Mounts": mounts}


async def start_once(
    docker: Any, image: str, run_id: str, network: str, size: int, sub: dict[str, Any]
) -> tuple[float, float]:
    """Seconds to create ``size`` containers at once on ``network`` (``user`` and
    ``session``: a fresh network made and removed around it, untimed; ``session``: with
    the host configuration ``sub`` and a fresh volume; ``followed`` as ``session``, each
    log followed once its start returned), and then to start them at once; everything
    is removed."""
    made = volume = None
    host_config: dict[str, Any] = {}
    name = f"jc-bench-start-{run_id}-{uuid.uuid4().hex[:6]}"
    labels = {BENCH_LABEL: run_id}
    session_like = network in ("session", "followed")
    if network == "user" or session_like:
        made = await docker.networks.create({"Name": name, "Driver": "bridge", "Labels": labels})
    if session_like:
        volume = await docker.volumes.create({"Name": name, "Labels": labels})
        host_config = with_volume(sub, name)
    where = made.id if made is not None else network
    containers: list[Any] = []
    try:
        began = time.monotonic()
        results = await asyncio.gather(
            *(
                docker.containers.create(sleeper(image, run_id, where, host_config))
                for _ in range(size)
            ),
            return_exceptions=True,
        )
        # Every create is awaited, so one that failed leaves none made unseen.
        containers = [c for c in results if not isinstance(c, BaseException)]
        for failed in results:
            if isinstance(failed, BaseException):
                raise failed
        created = time.monotonic()
        follows: list[asyncio.Task[bool]] = []

        async def start(container: Any) -> None:
            await container.start()
            if network == "followed":
                follows.append(asyncio.ensure_future(first_line(container)))

        await asyncio.gather(*(start(c) for c in containers))
        started = time.monotonic()
        if not all(await asyncio.gather(*follows)):
            raise RuntimeError(f"a followed container's log did not say {SAID!r}")
        return created - began, started - created
    finally:
        await asyncio.gather(*(c.delete(force=True) for c in containers), return_exceptions=True)
        if volume is not None:  # before the network, whose removal Docker may refuse
            await volume.delete()
        if made is not None:
            await made.delete()


async def first_line(container: Any) -> bool:
    """Follow ``container``'s log until its first line; whether that is :data:`SAID`."""
    async for line in container.log(stdout=True, stderr=True, follow=True):
        return bool(line.strip() == SAID)
    return False


#: Seconds of each run, by (phase, network, size); phases ``start`` and ``both``.
Took = dict[tuple[str, str, int], list[float]]


async def measure(args: argparse.Namespace) -> Took:
    """Alternating runs (networks in turn, their order reversed every other round)."""
    import aiodocker

    took: Took = {}
    docker = aiodocker.Docker()
    try:
        sub = await sub_host_config(docker, args.image)
        for size in args.sizes:
            for round_ in range(args.repeat):
                order = NETWORKS if round_ % 2 == 0 else NETWORKS[::-1]
                for network in order:
                    create, start = await start_once(
                        docker, args.image, args.run_id, network, size, sub
                    )
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
            lines.append(f"{label:12} {network:8} {cells}")
        if len(sizes) < 2:
            continue
        slopes = {
            n: slope(sizes, [statistics.median(took[(phase, n, s)]) for s in sizes])
            for n in NETWORKS
        }
        for network in NETWORKS:
            extra = slopes[network] - slopes["none"]
            base = COMPARED.get(network)
            beside = f", {slopes[network] - slopes[base]:+.3f} s over {base}" if base else ""
            lines.append(
                f"{label:12} {network:8} slope {slopes[network]:.3f} s per container"
                f" ({extra:+.3f} s over none{beside})"
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
    with jupyter_dirs():  # the session that shows a sub's making
        manager_id = store_manager_id()
        try:
            took = asyncio.run(measure(args))
        finally:
            check_nothing_left([f"{BENCH_LABEL}={args.run_id}", f"{MANAGER_LABEL}={manager_id}"])
    print(f"N sleeping containers created, then started, at once; median of {args.repeat} runs")
    print("\n".join(report(took, args.sizes)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
