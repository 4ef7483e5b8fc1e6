"""Where a launch's CPU goes: ours against the floor of ``bench_launch.py`` (a), by process.

Run as ``.venv/bin/python bench/bench_launch_cpu.py [--size 16] [--repeat 4]``.

A diagnostic, not a goal (``bench/run.py`` does not run it): it explains the launch
slope of issue #27 item 4. Each run, alternating, is (a)'s launch of one side: ours
(a cluster kernel of ``--size`` containers started with ``AsyncKernelManager``,
until the kernel answers and ``ssh`` to the last sub works) or the floor (the same
number of bare containers with sshd, made with aiodocker). Around it, the CPU time
of every process on the machine is read from ``/proc`` (user and system time, with
that of children it reaped: a start-up script's short commands count towards the
process that waited for them) and the machine's busy time from ``/proc/stat``. The
table gives the median per process name (kernel threads left out) and in all, for
both sides; ours is read before its shutdown. Two more rows read the containers'
own cgroups (v1 or v2): ``(containers)``, the CPU used inside the containers the
run made (their start-up, sshd, ours' start-up script, the kernel),
``(busiest container)``, main1's (it runs the kernel), and ``(each other
container)``, the median of the others' (a sub's start-up). Containers made
meanwhile by anything else count too: run it on a quiet machine. Other load on the machine shows on
both sides alike, since the runs alternate.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
from collections import Counter

from common.bare import floor_keys
from common.floors import Floor
from common.kernels import install_kernelspec, one_size_options, ours_launch
from common.sandbox import docker_ids, jupyter_dirs, store_manager_id

#: Clock ticks per second of /proc's CPU times.
_HZ = os.sysconf("SC_CLK_TCK")
#: Process names left out of the table: the kernel's own threads.
_KERNEL_THREADS = ("kworker", "ksoftirqd", "rcu_", "kdamond", "migration", "jbd2")


def busy_seconds() -> float:
    """The machine's CPU seconds spent not idle, over every CPU, since boot."""
    with open("/proc/stat") as f:
        ticks = [int(x) for x in f.readline().split()[1:]]
    return (sum(ticks) - ticks[3] - ticks[4]) / _HZ  # less idle and iowait


def process_seconds() -> dict[int, tuple[str, float]]:
    """Each process's name and CPU seconds (its own and its reaped children's)."""
    found = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat") as f:
                stat = f.read()
        except OSError:  # ended meanwhile
            continue
        name = stat[stat.index("(") + 1 : stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2 :].split()
        found[int(pid)] = (name, sum(int(t) for t in fields[11:15]) / _HZ)
    return found


def container_seconds() -> dict[str, float]:
    """Each Docker container's CPU seconds so far, by id, from its own cgroup (the
    engine's own reader, ``host_cgroup.cpu_seconds``): what ran inside it, its
    start-up included. Containers whose cgroup is not found are left out."""
    from jupyter_cluster.engine.agents.docker.host_cgroup import cpu_seconds

    found = {}
    for cid in docker_ids("ps", "-aq", "--no-trunc"):
        seconds = cpu_seconds(cid)
        if seconds is not None:
            found[cid] = seconds
    return found


def spent_in_containers(before: set[str], after: dict[str, float]) -> dict[str, float]:
    """Rows of the containers made since ``before`` (ids then): their CPU seconds in
    all, the busiest one's (main1, which runs the kernel) and the median of the others."""
    made = sorted(seconds for cid, seconds in after.items() if cid not in before)
    if not made:
        return {}
    rows = {"(containers)": sum(made), "(busiest container)": made[-1]}
    if len(made) > 1:
        rows["(each other container)"] = statistics.median(made[:-1])
    return rows


def spent_by_name(
    before: dict[int, tuple[str, float]], after: dict[int, tuple[str, float]]
) -> Counter[str]:
    """CPU seconds per process name between two readings (new processes whole)."""
    spent: Counter[str] = Counter()
    for pid, (name, seconds) in after.items():
        old_name, old = before.get(pid, (name, 0.0))
        if name.startswith(_KERNEL_THREADS):
            continue
        spent[name] += seconds - (old if old_name == name else 0.0)
    return spent


async def measure(args: argparse.Namespace) -> dict[str, list[Counter[str]]]:
    """Alternating runs of both sides; per side, one Counter of seconds per run."""
    import aiodocker

    from jupyter_cluster.core.units import parse_size

    runs: dict[str, list[Counter[str]]] = {"ours": [], "floor": []}
    with jupyter_dirs() as root:
        store_manager_id()
        docker = aiodocker.Docker()
        mem = parse_size(args.mem, "mem")
        floor = Floor(docker, args, args.run_id, mem, floor_keys())
        kernel = f"bench-{args.size}"
        install_kernelspec(
            root, args.timeout, image=args.image, size=args.size, cpu=1.0, mem=args.mem
        )
        try:
            await ours_launch(kernel, args.size, args.timeout, [])  # warm-up
            read: list[tuple[float, dict[int, tuple[str, float]], dict[str, float]]] = []

            def ready() -> None:  # ours is read when ready, before its shutdown
                read.append((busy_seconds(), process_seconds(), container_seconds()))

            for i in range(2 * args.repeat):
                side = ("ours", "floor")[(i + i // 2) % 2]  # ABBA: neither always first
                existing = set(docker_ids("ps", "-aq", "--no-trunc"))  # before the readings
                busy, before = busy_seconds(), process_seconds()
                if side == "ours":
                    read.clear()
                    await ours_launch(kernel, args.size, args.timeout, [], on_ready=ready)
                    [(busy_after, after, inside)] = read
                else:
                    try:
                        await floor.launch(args.size, 1.0)
                        busy_after, after = busy_seconds(), process_seconds()
                        inside = container_seconds()
                    finally:
                        await floor.remove()
                spent = spent_by_name(before, after)
                spent["(machine, busy)"] = busy_after - busy
                spent.update(spent_in_containers(existing, inside))
                runs[side].append(spent)
                print(f"{side}: {spent['(machine, busy)']:.2f} s busy", file=sys.stderr)
        finally:
            await floor.remove_run()
            await docker.close()
    return runs


def table(runs: dict[str, list[Counter[str]]], least: float = 0.01) -> list[str]:
    """Lines: per process name, the median CPU seconds of each side and the difference."""
    names = {n for side in runs.values() for spent in side for n in spent}

    def median(side: str, name: str) -> float:
        return statistics.median(spent[name] for spent in runs[side])

    rows = [(n, median("ours", n), median("floor", n)) for n in names]
    rows = [r for r in rows if max(r[1], r[2]) >= least]
    rows.sort(key=lambda r: -max(r[1], r[2]))
    lines = [f"{'process':28} {'ours':>8} {'floor':>8} {'ours-floor':>11}"]
    lines += [f"{n[:28]:28} {o:8.3f} {f:8.3f} {o - f:+11.3f}" for n, o, f in rows]
    return lines


def main(argv: list[str] | None = None) -> int:
    """Measure and print the table (CPU seconds, medians of ``--repeat`` runs each)."""
    args = one_size_options(__doc__.splitlines()[0], argv)
    runs = asyncio.run(measure(args))
    print(f"CPU seconds of a size-{args.size} launch, median of {args.repeat} runs each")
    print("\n".join(table(runs)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
