"""What removing N containers of one network at once costs through the engine's agent.

Run as ``.venv/bin/python bench/bench_teardown.py [--sizes 4,16] [--repeat 4]``.

A diagnostic, not a goal (``bench/run.py`` does not run it: it has no ``run``): the
price of the way the Docker agent removes a container on engines that can freeze
when two containers of one network exit together (Docker before 20.10.27; see
``jupyter_cluster/engine/agents/docker/network_leave.py``). N containers of the
kernel image that only sleep (``--init``, 0.5 CPU and 256 MiB each) are started on
a fresh user-defined bridge, untimed; then, timed until every container and the
network are gone, alternating:

- **ours**: ``DockerAgent.remove_container`` for all of them at once (on such an
  engine each first leaves the network, one at a time, the lock the engine
  processes of one store share included), then the network removed;
- **floor**: aiodocker's forced delete for all of them at once, then the network;
- **one by one**: the same deletes, one after another (the other way to keep two
  containers of a network from exiting together), against the floor.

Prints the medians and ratios, and whether this engine gets the departures one at a
time; fails if anything of its run is left.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from typing import Any

from common import harness
from common.constants import BENCH_LABEL, IMAGE
from common.sandbox import add_run_id, check_nothing_left

NAME = "teardown"


def options(argv: list[str] | None = None) -> argparse.Namespace:
    """``--sizes``, ``--repeat``, ``--image``, ``--run-id``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="4,16", help="containers per run (default 4,16)")
    parser.add_argument("--repeat", type=int, default=4, help="runs per size and way")
    parser.add_argument("--image", default=IMAGE, help=f"the image (default {IMAGE})")
    add_run_id(parser)
    args = parser.parse_args(argv)
    args.sizes = [int(s) for s in args.sizes.split(",") if s]
    return args


class Teardowns:
    """Makes a run's containers and removes them each way; ``docker``: aiodocker."""

    def __init__(self, docker: Any, agent: Any, args: argparse.Namespace) -> None:
        self.docker, self.agent, self.args = docker, agent, args

    async def _make(self, size: int) -> tuple[Any, list[Any]]:
        labels = {BENCH_LABEL: self.args.run_id}
        network = await self.docker.networks.create(
            {"Name": f"bench-teardown-{time.monotonic_ns()}", "Labels": labels}
        )
        host = {"NetworkMode": network.id, "Init": True, "NanoCpus": 5 * 10**8}
        host["Memory"] = 256 * 2**20
        body = {"Image": self.args.image, "Entrypoint": ["sleep", "600"], "Cmd": []}
        made = await asyncio.gather(
            *(
                self.docker.containers.create({**body, "Labels": labels, "HostConfig": host})
                for _ in range(size)
            )
        )
        await asyncio.gather(*(c.start() for c in made))
        await asyncio.sleep(0.3)  # every container settled, as a session's before its end
        return network, made

    async def timed(self, size: int, way: str) -> float:
        """Seconds to remove ``size`` fresh containers and their network ``way``."""
        network, made = await self._make(size)
        start = time.perf_counter()
        if way == "ours":
            await asyncio.gather(*(self.agent.remove_container(c.id) for c in made))
        elif way == "floor":
            await asyncio.gather(*(c.delete(force=True, v=True) for c in made))
        else:
            for container in made:
                await container.delete(force=True, v=True)
        await network.delete()
        return time.perf_counter() - start


async def measure(args: argparse.Namespace) -> list[dict[str, Any]]:
    """Every size, each way alternating; fails if a Docker object is left behind."""
    import aiodocker

    from jupyter_cluster.engine.agents.registry import agent_configs, make_agent

    rows: list[dict[str, Any]] = []
    docker = aiodocker.Docker()
    with tempfile.TemporaryDirectory() as data_root:
        [config] = agent_configs([{"id": "local", "cpu": 64, "mem": "64g"}], data_root)
        # With the lock the engine processes of a store share, as ClusterManager's agents.
        agent: Any = make_agent(config, lock_dir=os.path.join(data_root, "locks"))
        try:
            version = (await docker.version())["Version"]
            one_at_a_time = await agent.leaving.needed()
            harness.progress(f"Docker {version}: departures one at a time: {one_at_a_time}")
            teardowns = Teardowns(docker, agent, args)
            for size in args.sizes:
                ways = {w: (lambda w=w, s=size: teardowns.timed(s, w)) for w in ("ours", "floor")}
                ours, floor = await harness.alternate(args.repeat, ways["ours"], ways["floor"])
                serial, again = await harness.alternate(
                    args.repeat, lambda s=size: teardowns.timed(s, "serial"), ways["floor"]
                )
                note = f"Docker {version}; departures one at a time: {one_at_a_time}"
                case = f"{size} containers of one network removed at once"
                rows.append(harness.result(NAME, case, "seconds", ours, floor, note=note))
                case = f"{size} containers removed one after another"
                rows.append(harness.result(NAME, case, "seconds", serial, again, note=note))
        finally:
            await agent.close()
            await docker.close()
            check_nothing_left([f"{BENCH_LABEL}={args.run_id}"])
    return rows


def main(argv: list[str] | None = None) -> int:
    """Measure, print the table, write ``bench/results/teardown.json``."""
    return harness.main_of(NAME, options, measure, argv)


if __name__ == "__main__":
    sys.exit(main())
