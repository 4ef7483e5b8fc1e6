"""A size-4 session over two agents against bare containers on the same agents (issue #13, 1h).

Run as ``.venv/bin/python bench/bench_multiagent.py [--repeat 3] [--quick]`` (or
``bench/run.py --only multiagent``). Not in ``run.py``'s default set: it first
starts two Docker-in-Docker agents (a minute or more: engines, a Swarm, the image
loaded into each) and removes them at the end.

The agents are those of the multi-host tests (``tests.multihost.agents.AgentCluster``):
two ``dockerd`` in containers of this machine, each serving its API over TLS with
a client certificate, in one Swarm, the image loaded into each. Both sides get
``--cpu`` CPUs and ``--mem`` memory (swap equal to it) per container; each agent
is given room for exactly two containers (``cpu`` = 2 x ``--cpu``), so a size-4
multi-node session takes two on each.

ours
    ``AsyncKernelManager(kernel_name=<cluster kernelspec: size 4, multi-node>)``
    ``.start_kernel()`` (returns once the session is RUNNING: every sshd listens),
    then, concurrently, a ``kernel_info`` reply and ``ssh <last sub> true`` run in
    main1 (``ClusterManager.exec``) exiting 0. The session must span both agents.
    The kernel's traffic goes the way the engine sends it for an agent off this
    machine's loopback (``--kernel-transport``, default ``ssh``: forwarded through
    main1's SSH port). Then ``shutdown_kernel()``. Separately,
    ``ClusterManager.launch`` of the same session (untimed) and ``terminate``
    until it returns (every container and the network gone from both agents;
    checked after).
floor
    the same hosts on the same agents as ours' placement (two on each): an
    attachable Swarm overlay network created through main1's agent (as the engine
    does), then the four bare containers created, given their files (host key,
    root's authorized key; main1 also the client key and the kernel's connection
    file) and started concurrently with aiodocker over each agent's TLS API. Each
    runs the image's sshd on port 2200; main1 also ``python3 -m ipykernel_launcher``
    with its five ports published on its agent's address. Timed from the first API
    call until the kernel answers ``kernel_info`` and ``ssh HOST true`` run in main1
    (docker exec) worked for every host, the last sub last (each retried every 20 ms).
    Then removed: the containers concurrently (``force``), then the network.

ours warm
    the same start of the same kernelspec, after a manager of the same store whose
    ``warm_pool`` names the session's shape has made one set (untimed, as a server
    refills its pool in the background): no agent holds four containers, so the set
    is spread over both agents on an overlay, and the launch must take it. Against
    the floor, alternating again.

Rows: launch to ready (no goal of its own in the issue; (a)'s is 1.05 at size 4),
the warm launch to ready (goal 0.5, as ``bench_warm.py``'s for one agent),
``shutdown_kernel`` and ``terminate`` to gone against the floor's removal (goal
1.2, as (b)). Everything runs in temporary Jupyter dirs; every container and
network made is removed, on the agents and here, and the script fails if any is left.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import uuid
from copy import deepcopy
from typing import Any

from common import harness
from common.agents import (
    AgentFloor,
    agent_client,
    agent_cluster,
    agent_leftovers,
    check_two_agents,
    engine_config,
    session_on_two_agents,
)
from common.bare import floor_keys
from common.constants import BENCH_LABEL, IMAGE, MANAGER_LABEL
from common.harness import log
from common.kernels import install_kernelspec, ours_launch, ours_terminate
from common.sandbox import jupyter_dirs, store_manager_id

NAME = "multiagent"
SIZE = 4
KERNEL = "bench-multiagent"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options (``--quick``: one run of each kind, no warm-up run)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, help="runs of each kind (default 3)")
    parser.add_argument("--cpu", default="0.5", help="CPUs per container (both kinds)")
    parser.add_argument("--mem", default="256m", help="memory per container (both kinds)")
    parser.add_argument("--image", default=IMAGE)
    parser.add_argument("--kernel-transport", default="ssh", choices=("ssh", "direct"))
    parser.add_argument(
        "--storage",
        choices=("volume", "tmpfs"),
        help="the agents' /var/lib/docker (default: the multi-host tests' default)",
    )
    parser.add_argument("--timeout", type=float, default=240.0, help="seconds per launch")
    parser.add_argument("--quick", action="store_true", help="one run of each, no warm-up")
    args = parser.parse_args(argv)
    args.repeat = args.repeat or (1 if args.quick else 3)
    return args


async def measure(args: argparse.Namespace, cluster: Any, run_id: str) -> list[dict[str, Any]]:
    """Every run, alternating; the rows."""
    from jupyter_cluster.core.units import parse_cpu, parse_size
    from jupyter_cluster.engine.manager import ClusterManager

    cpu, mem = parse_cpu(args.cpu, "cpu"), parse_size(args.mem, "mem")
    agents = cluster.configs(cpu=2 * cpu, mem="64g", kernel_transport=args.kernel_transport)
    config = engine_config(agents, cluster.data_root)
    clients = {a.id: agent_client(a.url, a.tls) for a in cluster}
    floor = AgentFloor(
        clients, {a.id: a.ip for a in cluster}, args.image, cpu, mem, run_id, floor_keys()
    )
    manager = ClusterManager(config=config)
    samples: dict[str, list[float]] = {"shutdown": [], "terminate": [], "removal": []}
    try:
        await manager.start()
        spec = manager.make_spec(image=args.image, size=SIZE, mode="multi-node", cpu=cpu, mem=mem)
        placement: dict[str, str] = {}

        async def ours() -> float:
            placed: dict[str, str] = {}
            seconds = await ours_launch(
                KERNEL, SIZE, args.timeout, samples["shutdown"], config, placed
            )
            check_two_agents(placed)
            placement.update(placed)
            samples["terminate"].append(await ours_terminate(manager, spec, session_on_two_agents))
            log(
                f"ours: launch {seconds:.3f} s, shutdown_kernel {samples['shutdown'][-1]:.3f} s, "
                f"terminate {samples['terminate'][-1]:.3f} s ({placed})"
            )
            return seconds

        async def bare() -> float:
            try:
                seconds = await floor.launch(placement, args.timeout)
            finally:
                samples["removal"].append(await floor.remove())
            log(f"floor: launch {seconds:.3f} s, removal {samples['removal'][-1]:.3f} s")
            return seconds

        if not args.quick:  # warm-up; ours goes first anyway: the floor copies its placement
            await ours()
            await bare()
            for values in samples.values():
                values.clear()
        launch, base = await harness.alternate(args.repeat, ours, bare)
        removal = list(samples["removal"])
        warm = await warm_launches(args, config, cpu, bare)
    finally:
        await floor.remove_run()
        await manager.close()
        await asyncio.gather(*(c.close() for c in clients.values()))
    where = f"size {SIZE} over 2 agents"
    note = f"cpu {args.cpu}, mem {args.mem} per container; kernel over {args.kernel_transport}"
    removed = "floor: removing the bare containers and the overlay"
    return [
        harness.result(NAME, f"h: launch to ready, {where}", "seconds", launch, base, note=note),
        harness.result(
            NAME,
            f"h: warm launch to ready, {where}",
            "seconds",
            *warm,
            goal=0.5,
            note=f"{note}; one warm set spread over both agents",
        ),
        harness.result(
            NAME,
            f"h: shutdown_kernel, {where}",
            "seconds",
            samples["shutdown"],
            removal,
            note=removed,
        ),
        harness.result(
            NAME,
            f"h: terminate to gone, {where}",
            "seconds",
            samples["terminate"],
            removal,
            goal=1.2,
            note=removed,
        ),
    ]


async def warm_launches(
    args: argparse.Namespace, config: Any, cpu: float, bare: Any
) -> tuple[list[float], list[float]]:
    """The warm launch against the floor (``bare``), alternating: before each, a
    keeper of the same store makes the pool's one set, which must be spread over
    both agents and be taken by the launch. The warm runs' seconds and the floor's."""
    from jupyter_cluster.engine.manager import ClusterManager

    warm_config = deepcopy(config)
    shape = {"image": args.image, "cpu": cpu, "mem": args.mem, "size": SIZE}
    warm_config.ClusterManager.warm_pool = [shape]
    keeper = ClusterManager(config=warm_config)

    async def warm() -> float:
        await keeper.warm.fill()
        ready = keeper.warm.table.ready()
        if len(ready) != 1 or not ready[0].spread:
            raise RuntimeError(f"the pool does not hold one spread set: {ready}")
        placed: dict[str, str] = {}
        seconds = await ours_launch(KERNEL, SIZE, args.timeout, [], config, placed)
        check_two_agents(placed)
        if keeper.warm.table.ready():
            raise RuntimeError("the launch did not take the warm set")
        log(f"ours warm: launch {seconds:.3f} s ({placed})")
        return seconds

    try:
        return await harness.alternate(args.repeat, warm, bare)
    finally:
        await keeper.warm.drain()
        await keeper.close()


async def run(args: argparse.Namespace, cluster: Any = None) -> list[dict[str, Any]]:
    """Start the agents (unless given started ``cluster``, e.g. the multi-host tests'),
    measure, check that nothing is left on them, stop the agents that it started."""
    run_id = uuid.uuid4().hex[:12]
    with jupyter_dirs() as root:
        manager_id = store_manager_id()
        install_kernelspec(
            root,
            args.timeout,
            KERNEL,
            f"bench {SIZE} over 2 agents",
            image=args.image,
            size=SIZE,
            mode="multi-node",
            cpu=args.cpu,
            mem=args.mem,
        )
        own = cluster is None
        if own:
            log("starting two Docker-in-Docker agents (engines, Swarm, images)...")
            cluster = await asyncio.to_thread(agent_cluster, args.image, args.storage)
        try:
            rows = await measure(args, cluster, run_id)
            labels = [f"{BENCH_LABEL}={run_id}", f"{MANAGER_LABEL}={manager_id}"]
            left = await asyncio.to_thread(agent_leftovers, cluster, labels)
        finally:
            if own:
                await asyncio.to_thread(cluster.stop)
    if left:
        raise SystemExit(f"the benchmark left Docker objects on the agents: {left}")
    return rows


def main(argv: list[str] | None = None) -> int:
    """Measure, print the table, write ``bench/results/multiagent[_quick].json``."""
    return harness.main_of(NAME, parse_args, run, argv)


if __name__ == "__main__":
    sys.exit(main())
