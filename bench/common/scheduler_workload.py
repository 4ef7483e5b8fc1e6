"""The scheduler benchmark's workload, its floor and the growth fit (``bench_scheduler.py``).

The workload is random but seeded, so every run and both kinds place the same
queue: agents of mixed sizes (4 to 64 CPUs, 2 to 8 GiB per CPU, one in ten with
4 GPUs in a ``gpu`` group, two Docker Swarms), sessions of a small catalogue of
shapes (as a launch form offers), a fifth of them multi-node, sizes 1 to 4 with a
few 8 and 16. Demand is about 1.2 times the capacity, so the queue ends with
sessions that wait, and their reasons are computed too.
"""

from __future__ import annotations

import heapq
import math
import random
from collections.abc import Sequence

from common.harness import slope
from jupyter_cluster.core.models import LaunchSpec
from jupyter_cluster.core.resources import Resources
from jupyter_cluster.core.scheduler import AgentSlot

GIB = 1024**3
CPUS = (4, 8, 16, 16, 32, 32, 64)
SHAPES = (("0.5", "512m"), ("1", "1g"), ("1", "2g"), ("2", "4g"), ("4", "8g"), ("2", "2g"))
SIZES = (1, 1, 1, 2, 2, 3, 4, 4, 8, 16)


def make_agents(count: int, seed: int = 1) -> list[AgentSlot]:
    """``count`` simulated agents of mixed sizes, all empty, all with the image."""
    rng = random.Random(seed)
    agents = []
    for i in range(count):
        cpu = rng.choice(CPUS)
        gpu = i % 10 == 9
        agents.append(
            AgentSlot(
                id=f"agent{i:05}",
                resource_group="gpu" if gpu else "default",
                capacity=Resources(cpu, cpu * rng.choice((2, 4, 8)) * GIB, 0, 4 if gpu else 0),
                gpu_ids=tuple(f"gpu{k}" for k in range(4)) if gpu else (),
                swarm="swarm-a" if i % 3 else "swarm-b",
            )
        )
    return agents


def make_queue(count: int, seed: int = 2) -> list[LaunchSpec]:
    """``count`` queued sessions of a few shapes, modes and sizes."""
    rng = random.Random(seed)
    specs = []
    for i in range(count):
        cpu, mem = rng.choice(SHAPES)
        gpu = i % 10 == 9
        specs.append(
            LaunchSpec.create(
                image="jupyter-cluster/kernel",
                size=rng.choice((1, 2, 4) if gpu else SIZES),  # an agent has 4 GPUs
                mode="multi-node" if rng.random() < 0.2 else "single-node",
                cpu=cpu,
                mem=mem,
                gpu=1 if gpu else 0,
                resource_group="gpu" if gpu else "default",
            )
        )
    return specs


def floor_place(specs: Sequence[LaunchSpec], agents: Sequence[AgentSlot]) -> int:
    """The floor: the queue iterated once while the agents are kept sorted.

    A heap of the agents by free CPU (built once: the sort), then per session one
    pop of the roomiest agent, a subtraction and one push: the least any placement
    that looks at every session and ranks the agents can do, in the same Python.
    It ignores memory, GPUs, modes, groups and reasons. Returns how many it placed.
    """
    heap = [(-a.capacity.cpu, a.capacity.mem, a.id) for a in agents]
    heapq.heapify(heap)
    placed = 0
    for spec in specs:
        need = spec.resources.cpu * spec.size
        free, mem, agent_id = heapq.heappop(heap)
        if -free >= need:
            free += need
            placed += 1
        heapq.heappush(heap, (free, mem, agent_id))
    return placed


def exponent(points: Sequence[tuple[float, float]]) -> float:
    """The least-squares slope of log(y) against log(x): y grows as x to this power."""
    logs = [(math.log(x), math.log(y)) for x, y in points if x > 0 and y > 0]
    if len(logs) < 2:
        return math.nan
    try:
        return slope([x for x, _ in logs], [y for _, y in logs])
    except ZeroDivisionError:  # every x the same
        return math.nan
