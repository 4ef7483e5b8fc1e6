"""When each container of a launch gets started and ready: ours against (a)'s floor.

Run as ``.venv/bin/python bench/bench_launch_timeline.py [--size 16] [--repeat 4]``.

A diagnostic, not a goal (``bench/run.py`` does not run it), for issue #27 item 4
(the launch slope), beside ``bench_launch_cpu.py`` (where the CPU goes) and
``bench_docker_start.py`` (what Docker's own calls cost). Each run, alternating, is
``bench_launch.py`` (a)'s launch of one side at ``--size``, timed from its start:

- ours: a cluster kernel started with ``AsyncKernelManager``. Each container's
  milestones are the engine's own launch clock's (``core.timings.LaunchClock.mark``,
  observed, not replaced): ``create`` (created), ``files`` (its start-up files in),
  ``start`` (Docker's start answered), ``ssh_ready`` (its start-up script said ready).
- floor: bare containers made with aiodocker: ``start`` (created, files put in and
  Docker's start answered) and ``ssh_ready`` (sshd sent its banner to a connect).

For each milestone the table gives the median over runs of its first, median and
last container, and ``done`` the launch's end (the kernel answers and ``ssh`` to
the last sub works). Whether a side's starts end later, or its containers take
longer from start to ready, or its end comes later after the last is ready, tells
where a difference in the slope lies.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import sys
import time
from collections.abc import Iterator
from typing import Any

import common.floors as floors
from common.bare import floor_keys
from common.kernels import install_kernelspec, one_size_options, ours_launch
from common.sandbox import jupyter_dirs, store_manager_id

#: Milestones in the order a container reaches them (each side has some of them).
MILESTONES = ("create", "files", "start", "ssh_ready")


class Milestones:
    """The seconds since :meth:`begin` at which each container reached each milestone."""

    def __init__(self) -> None:
        self.began = time.monotonic()
        self.seen: dict[str, list[float]] = {}

    def begin(self) -> None:
        """A run starts: forget the last one's."""
        self.began, self.seen = time.monotonic(), {}

    def reached(self, milestone: str) -> None:
        """One container reached ``milestone`` now."""
        self.seen.setdefault(milestone, []).append(time.monotonic() - self.began)

    def summary(self) -> dict[str, tuple[float, float, float]]:
        """Per milestone: its first, median and last container's seconds."""
        return {m: (min(t), statistics.median(t), max(t)) for m, t in self.seen.items() if t}


@contextlib.contextmanager
def observed(marks: Milestones) -> Iterator[None]:
    """While in it, the engine's launch clock and the floor's start and sshd check
    also tell ``marks`` (each still does what it did); restored after."""
    from jupyter_cluster.core.timings import LaunchClock

    clock: Any = LaunchClock  # its methods are swapped below, then put back
    floor: Any = floors.Floor
    mark, start, answers = clock.mark, floor.start, floors.sshd_answers

    def clock_mark(self: LaunchClock, host: str, phase: str) -> None:
        marks.reached(phase)
        mark(self, host, phase)

    async def floor_start(self: floors.Floor, *args: Any) -> Any:
        made = await start(self, *args)
        marks.reached("start")
        return made

    async def sshd_answered(ip: str, timeout: float) -> None:
        await answers(ip, timeout)
        marks.reached("ssh_ready")

    clock.mark, floor.start, floors.sshd_answers = clock_mark, floor_start, sshd_answered
    try:
        yield
    finally:
        clock.mark, floor.start, floors.sshd_answers = mark, start, answers


async def measure(args: argparse.Namespace) -> dict[str, list[dict[str, Any]]]:
    """Alternating runs of both sides; per side, each run's summary and its end."""
    import aiodocker

    from jupyter_cluster.core.units import parse_size

    runs: dict[str, list[dict[str, Any]]] = {"ours": [], "floor": []}
    marks = Milestones()
    with jupyter_dirs() as root:
        store_manager_id()
        docker = aiodocker.Docker()
        floor = floors.Floor(docker, args, args.run_id, parse_size(args.mem, "mem"), floor_keys())
        kernel = f"bench-{args.size}"
        install_kernelspec(
            root, args.timeout, image=args.image, size=args.size, cpu=1.0, mem=args.mem
        )
        try:
            await ours_launch(kernel, args.size, args.timeout, [])  # warm-up
            with observed(marks):
                for i in range(2 * args.repeat):
                    side = ("ours", "floor")[(i + i // 2) % 2]  # ABBA: neither always first
                    marks.begin()
                    if side == "ours":
                        done = await ours_launch(kernel, args.size, args.timeout, [])
                    else:
                        try:
                            done = await floor.launch(args.size, 1.0)
                        finally:
                            await floor.remove()
                    runs[side].append({**marks.summary(), "done": (done, done, done)})
                    print(f"{side}: done in {done:.3f} s", file=sys.stderr)
        finally:
            await floor.remove_run()
            await docker.close()
    return runs


def table(runs: dict[str, list[dict[str, Any]]]) -> list[str]:
    """Lines: per milestone, each side's medians of its first, median and last container."""
    header = ("ours: first   median    last", "floor: first   median    last")
    lines = [f"{'milestone':10} {header[0]:>28}  {header[1]:>30}"]
    for milestone in (*MILESTONES, "done"):
        cells = []
        for side in ("ours", "floor"):
            found = [run[milestone] for run in runs[side] if milestone in run]
            if not found:
                cells.append(f"{'-':>28}")
                continue
            first, middle, last = (statistics.median(r[k] for r in found) for k in range(3))
            cells.append(f"{first:12.3f} {middle:8.3f} {last:7.3f}")
        lines.append(f"{milestone:10} {cells[0]:>28}  {cells[1]:>30}")
    return lines


def main(argv: list[str] | None = None) -> int:
    """Measure and print the table (seconds from each launch's start)."""
    args = one_size_options(__doc__.splitlines()[0], argv)
    runs = asyncio.run(measure(args))
    print(f"Seconds from a size-{args.size} launch's start, median of {args.repeat} runs each")
    print("\n".join(table(runs)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
