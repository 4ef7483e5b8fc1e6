"""What the notebook's launch form says of room now (core.launch_form.room_note): the
first reachable agent of the chosen group with room for every container, else what
the session will do, by mode."""

from __future__ import annotations

from typing import Any

from jupyter_cluster.core.launch_form import room_note
from jupyter_cluster.core.resources import Resources

GIB = 1 << 30


def agent(id: str, cpu: float, mem: int, gpu: int = 0, **extra: Any) -> dict[str, Any]:
    """An agent as ``agents_info`` lists it, with this much free."""
    return {
        "id": id,
        "resource_group": "default",
        "reachable": True,
        "free": {"cpu": cpu, "mem": mem, "gpu": gpu},
        **extra,
    }


PER = Resources(cpu=0.5, mem=GIB)


def test_the_first_agent_with_room_for_every_container_is_named() -> None:
    agents = [agent("small", 1.0, 8 * GIB), agent("big", 2.0, 8 * GIB), agent("c", 4, 8 * GIB)]
    assert room_note(agents, "default", PER, 4, "single-node") == "fits on agent big now"


def test_room_counts_every_resource_and_a_float_sum_that_is_just_enough() -> None:
    tenth = Resources(cpu=0.1, mem=GIB)
    assert room_note([agent("a", 0.3, 3 * GIB)], "default", tenth, 3, "single-node") == (
        "fits on agent a now"  # 0.1 * 3 is 0.30000000000000004
    )
    short_of_memory = [agent("a", 8, 3 * GIB)]
    assert room_note(short_of_memory, "default", PER, 4, "single-node").startswith("no single")
    gpus = Resources(cpu=0.5, mem=GIB, gpu=1)
    assert room_note([agent("a", 8, 8 * GIB, gpu=1)], "default", gpus, 2, "multi-node") == (
        "no single agent has room now: it will be spread over agents, or wait"
    )


def test_unreachable_agents_and_other_groups_give_no_room() -> None:
    agents = [
        agent("down", 8, 8 * GIB, reachable=False),
        agent("gpu-box", 8, 8 * GIB, resource_group="gpu"),
    ]
    assert room_note(agents, "default", PER, 2, "single-node") == (
        "no single agent has room now: it will be PENDING until one has"
    )
    assert room_note(agents, "gpu", PER, 2, "single-node") == "fits on agent gpu-box now"
