"""Property tests of the scheduler: whatever the agents and the request, a placement
never over-books an agent, and the mode's promises hold."""

from __future__ import annotations

from collections import Counter

from hypothesis import event, given, settings
from hypothesis import strategies as st

from jupyter_cluster.core.models import ClusterMode, LaunchSpec
from jupyter_cluster.core.resources import Resources
from jupyter_cluster.core.scheduler import AgentSlot, Pending, place
from jupyter_cluster.errors import InvalidRequest

from .support import agent_slots


@st.composite
def scenarios(draw: st.DrawFn) -> tuple[LaunchSpec, list[AgentSlot]]:
    count = draw(st.integers(min_value=1, max_value=6))
    agents = [draw(agent_slots(i)) for i in range(count)]
    spec = LaunchSpec.create(
        image="img",
        size=draw(st.integers(1, 6)),
        mode=draw(st.sampled_from(["single-node", "multi-node"])),
        cpu=draw(st.sampled_from([0.1, 0.25, 0.5, 1, 1.5, 2])),
        mem=draw(st.sampled_from(["64m", "256m", "512m", "1g", "2g"])),
        gpu=draw(st.sampled_from([0] * 4 + [1, 2])),
        resource_group=draw(st.sampled_from(["default"] * 8 + ["other", "none"])),
    )
    return spec, agents


@settings(max_examples=300, deadline=None)
@given(scenarios())
def test_placement_never_exceeds_free_capacity(
    scenario: tuple[LaunchSpec, list[AgentSlot]],
) -> None:
    spec, agents = scenario
    per, n = spec.resources, spec.size
    try:
        result = place(spec, agents)
    except InvalidRequest as exc:
        event(f"invalid {exc.field}")
        assert exc.field in {"resource_group", "image", "size"}
        return
    event(f"{type(result).__name__} {spec.mode.value}")
    usable = [a for a in agents if a.resource_group == spec.resource_group and a.has_image]
    ready = [a for a in usable if a.schedulable]
    if isinstance(result, Pending):
        assert result.reason
        room = [a.fits(per) for a in ready]
        if spec.mode is ClusterMode.SINGLE_NODE:
            assert all(k < n for k in room)
        else:
            assert sum(room) < n
        return

    by_id = {a.id: a for a in ready}
    assert len(result.agents) == len(result.gpu_ids) == n
    assert set(result.agents) <= set(by_id), "placed on an agent that may not take it"
    for agent_id, count in Counter(result.agents).items():
        free = by_id[agent_id].free()
        assert count * per.cpu <= free.cpu + 1e-6
        assert count * per.mem <= free.mem
        given_ids = [
            g
            for a, ids in zip(result.agents, result.gpu_ids, strict=True)
            if a == agent_id
            for g in ids
        ]
        assert len(given_ids) == len(set(given_ids)) == count * per.gpu
        assert set(given_ids) <= set(by_id[agent_id].free_gpu_ids())
    if spec.mode is ClusterMode.SINGLE_NODE or any(a.fits(per) >= n for a in ready):
        assert result.agent_count == 1
    else:
        # Spans as few agents as possible: the biggest rooms first.
        rooms = sorted((a.fits(per) for a in ready), reverse=True)
        fewest = next(i + 1 for i in range(len(rooms)) if sum(rooms[: i + 1]) >= n)
        assert result.agent_count == fewest


@settings(max_examples=150, deadline=None)
@given(scenarios())
def test_too_big_is_judged_on_empty_agents(scenario: tuple[LaunchSpec, list[AgentSlot]]) -> None:
    spec, agents = scenario
    try:
        place(spec, agents)
    except InvalidRequest as exc:
        if exc.field != "size":
            return
    else:
        return
    per, n = spec.resources, spec.size
    empty_room = [
        a.fits(per, Resources(a.capacity.cpu, a.capacity.mem, 0, len(a.gpu_ids)))
        for a in agents
        if a.resource_group == spec.resource_group and a.has_image
    ]
    if spec.mode is ClusterMode.SINGLE_NODE:
        assert max(empty_room) < n
    else:
        assert sum(empty_room) < n
