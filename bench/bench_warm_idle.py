"""What an idle warm pool costs the machine it runs on (issue #27, item 3).

Run as ``.venv/bin/python bench/bench_warm_idle.py [--sets 2] [--size 1] [--seconds 60]``.

A manager on a private store fills a pool of ``--sets`` sets of ``--size`` containers
(the default image, 1 CPU, 256m each; main1 with ipykernel imported ahead, as a
server keeps them), then leaves it idle for ``--seconds``. Measured per container:
CPU time used over that span (its cgroup's counter, read with one exec at each end,
so it includes those two reads) and memory (``docker stats``' usage at the end).
Prints the total as % of one core and MiB, and per container. The pool is drained
at the end; nothing is left behind.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import tempfile
from pathlib import Path

from jupyter_cluster.engine.manager import ClusterManager

#: Prints the container's CPU time: "ns N" (cgroup v1) or "us N" (cgroup v2).
CPU_COUNTER = (
    "/bin/sh",
    "-c",
    "f=/sys/fs/cgroup/cpuacct/cpuacct.usage; "
    'if [ -r "$f" ]; then echo "ns $(cat "$f")"; '
    "else echo \"us $(sed -n 's/^usage_usec //p' /sys/fs/cgroup/cpu.stat)\"; fi",
)


async def cpu_seconds(manager: ClusterManager, container_id: str) -> float:
    """The container's cumulative CPU seconds (its cgroup's counter)."""
    agent = next(iter(manager.pool.agents.values()))
    out = bytearray()
    await agent.exec(
        container_id,
        CPU_COUNTER,
        user="root",
        workdir="/",
        on_output=lambda _s, d: out.extend(d),
    )
    unit, _, value = out.decode().strip().partition(" ")
    return int(value) / (1e9 if unit == "ns" else 1e6)


def memory_mib(container_ids: list[str]) -> dict[str, float]:
    """``docker stats`` memory usage of each container, MiB."""
    done = subprocess.run(
        ["docker", "stats", "--no-stream", "--format", "{{json .}}", *container_ids],
        capture_output=True,
        text=True,
        check=True,
    )
    units = {"B": 1 / 2**20, "KiB": 1 / 1024, "MiB": 1.0, "GiB": 1024.0}
    result = {}
    for line in done.stdout.splitlines():
        row = json.loads(line)
        used = row["MemUsage"].split("/")[0].strip()
        number = used.rstrip("KMGiB")
        result[row["ID"]] = float(number) * units[used[len(number) :]]
    return result


async def main(args: argparse.Namespace) -> None:
    """Fill, idle, measure, drain."""
    with tempfile.TemporaryDirectory() as tmp:
        shape = {"cpu": 1, "mem": "256m", "size": args.size, "count": args.sets}
        manager = ClusterManager(
            db_path=str(Path(tmp) / "cluster.db"), data_root=str(Path(tmp) / "f"), warm_pool=[shape]
        )
        try:
            await manager.start()
            made = await manager.warm.fill()
            ids = sorted(
                c
                for w in manager.warm.table.ready()
                for c in manager.warm.table.containers_of(w.set_id)
            )
            print(f"{made} warm sets, {len(ids)} containers; idle for {args.seconds:g} s")
            before = [await cpu_seconds(manager, c) for c in ids]
            await asyncio.sleep(args.seconds)
            after = [await cpu_seconds(manager, c) for c in ids]
            mem = memory_mib([c[:12] for c in ids])
            used = sum(a - b for a, b in zip(after, before, strict=True))
            pct = 100 * used / args.seconds
            mib = sum(mem.values())
            print(f"idle CPU: {pct:.3f}% of one core in all ({pct / len(ids):.3f}% per container)")
            print(f"memory: {mib:.1f} MiB in all ({mib / len(ids):.1f} MiB per container)")
        finally:
            await manager.warm.drain()
            await manager.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", type=int, default=2)
    parser.add_argument("--size", type=int, default=1)
    parser.add_argument("--seconds", type=float, default=60.0)
    asyncio.run(main(parser.parse_args()))
