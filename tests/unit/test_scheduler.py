"""Tests of jupyter_cluster.core.scheduler: placement in both modes, pending reasons."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import pytest

from jupyter_cluster.core.models import LaunchSpec
from jupyter_cluster.core.resources import Resources
from jupyter_cluster.core.scheduler import AgentSlot, Pending, Placement, place
from jupyter_cluster.errors import InvalidRequest

GIB = 1024**3


def slot(
    agent_id: str,
    cpu: float = 4,
    mem_g: float = 8,
    *,
    used_cpu: float = 0,
    used_mem_g: float = 0,
    gpus: Sequence[str] = (),
    used_gpus: Sequence[str] = (),
    group: str = "default",
    has_image: bool = True,
    schedulable: bool = True,
    swarm: str = "swarm",
) -> AgentSlot:
    return AgentSlot(
        id=agent_id,
        resource_group=group,
        capacity=Resources(cpu=cpu, mem=int(mem_g * GIB), shm=0, gpu=len(gpus)),
        used=Resources(cpu=used_cpu, mem=int(used_mem_g * GIB), shm=0, gpu=len(used_gpus)),
        gpu_ids=tuple(gpus),
        used_gpu_ids=frozenset(used_gpus),
        has_image=has_image,
        schedulable=schedulable,
        swarm=swarm,
    )


def spec(size: int, mode: str = "single-node", **kw: Any) -> LaunchSpec:
    kw.setdefault("cpu", 1)
    kw.setdefault("mem", "1g")
    return LaunchSpec.create(image="jupyter-cluster/kernel", size=size, mode=mode, **kw)


def placed(result: Placement | Pending) -> Placement:
    assert isinstance(result, Placement), result
    return result


def pending(result: Placement | Pending) -> Pending:
    assert isinstance(result, Pending), result
    return result


# -- single-node --------------------------------------------------------------


def test_single_node_all_on_the_agent_with_most_room() -> None:
    agents = [slot("a", cpu=4), slot("b", cpu=16, mem_g=32), slot("c", cpu=2)]
    result = placed(place(spec(3), agents))
    assert result.agents == ("b", "b", "b")
    assert result.agent_count == 1
    assert result.gpu_ids == ((), (), ())


def test_single_node_counts_what_is_in_use() -> None:
    agents = [slot("a", cpu=4), slot("b", cpu=16, mem_g=32, used_cpu=14)]
    assert placed(place(spec(2), agents)).agents == ("a", "a")


def test_single_node_size_1() -> None:
    assert placed(place(spec(1), [slot("only")])).agents == ("only",)


def test_single_node_ties_are_broken_by_id() -> None:
    agents = [slot("zeta"), slot("alpha"), slot("mid")]
    assert placed(place(spec(2), agents)).agents == ("alpha", "alpha")


def test_single_node_waits_when_no_agent_has_room_now() -> None:
    agents = [
        slot("a", cpu=4, used_cpu=3, mem_g=8, used_mem_g=6),
        slot("b", cpu=4, used_cpu=2.5, mem_g=8),
    ]
    reason = pending(place(spec(3), agents)).reason
    assert "3 x (1 CPU, 1g memory, 64m shm)" in reason
    assert "a has 1 CPU, 2g memory free" in reason
    assert "b has 1.5 CPU, 8g memory free" in reason
    assert "'default'" in reason


def test_single_node_waits_even_if_the_group_has_room_in_total() -> None:
    agents = [slot("a", cpu=4, used_cpu=2), slot("b", cpu=4, used_cpu=2)]
    assert isinstance(place(spec(3, cpu=1), agents), Pending)


def test_single_node_that_never_fits_is_invalid() -> None:
    agents = [slot("a", cpu=2, mem_g=4), slot("b", cpu=4, mem_g=8)]
    with pytest.raises(InvalidRequest) as info:
        place(spec(5), agents)
    assert info.value.field == "size"
    message = str(info.value)
    assert "can ever hold 5 x" in message
    assert "b, has 4 CPU, 8g memory" in message
    assert "multi-node" in message


def test_never_fits_is_judged_on_empty_agents_not_current_use() -> None:
    # Fully used now, but would fit when empty: wait rather than reject.
    agents = [slot("a", cpu=4, used_cpu=4, used_mem_g=8)]
    assert isinstance(place(spec(4), agents), Pending)


def test_memory_can_be_the_limit() -> None:
    agents = [slot("a", cpu=64, mem_g=3)]
    assert placed(place(spec(3, mem="1g"), agents)).agents == ("a",) * 3
    with pytest.raises(InvalidRequest):
        place(spec(4, mem="1g"), agents)


# -- multi-node ---------------------------------------------------------------


def test_multi_node_prefers_one_agent_when_one_has_room() -> None:
    agents = [slot("a", cpu=2), slot("b", cpu=8), slot("c", cpu=2)]
    result = placed(place(spec(4, "multi-node"), agents))
    assert result.agents == ("b",) * 4


def test_multi_node_spreads_when_no_single_agent_has_room() -> None:
    agents = [slot("a", cpu=2), slot("b", cpu=3), slot("c", cpu=1)]
    result = placed(place(spec(5, "multi-node"), agents))
    assert Counter(result.agents) == {"b": 3, "a": 2}
    # main1 goes where most containers are.
    assert result.agents[0] == "b"
    assert len(result.agents) == 5


def test_multi_node_spans_as_few_agents_as_possible() -> None:
    agents = [slot("s1", cpu=1), slot("s2", cpu=1), slot("s3", cpu=1), slot("big", cpu=4)]
    result = placed(place(spec(5, "multi-node"), agents))
    assert result.agent_count == 2
    assert Counter(result.agents)["big"] == 4


def test_multi_node_uses_every_agent_when_it_must() -> None:
    agents = [slot(f"n{i}", cpu=1) for i in range(4)]
    result = placed(place(spec(4, "multi-node"), agents))
    assert sorted(result.agents) == ["n0", "n1", "n2", "n3"]


def test_multi_node_is_all_or_nothing() -> None:
    agents = [slot("a", cpu=2, used_cpu=1), slot("b", cpu=2, used_cpu=1)]
    reason = pending(place(spec(3, "multi-node"), agents)).reason
    assert "across group 'default'" in reason
    assert "a has 1 CPU" in reason and "b has 1 CPU" in reason


def test_multi_node_that_never_fits_in_the_whole_group_is_invalid() -> None:
    agents = [slot("a", cpu=2), slot("b", cpu=2)]
    with pytest.raises(InvalidRequest) as info:
        place(spec(5, "multi-node"), agents)
    assert info.value.field == "size"
    assert "together can never hold 5 x" in str(info.value)


# -- groups, images, availability ---------------------------------------------


def test_only_agents_of_the_resource_group_are_used() -> None:
    agents = [slot("big", cpu=64, mem_g=64, group="default"), slot("g1", group="gpu")]
    assert placed(place(spec(2, resource_group="gpu"), agents)).agents == ("g1", "g1")


def test_unknown_resource_group_is_invalid() -> None:
    agents = [slot("a", group="default"), slot("b", group="gpu")]
    with pytest.raises(InvalidRequest) as info:
        place(spec(1, resource_group="tpu"), agents)
    assert info.value.field == "resource_group"
    assert "known groups: default, gpu" in str(info.value)


def test_no_agents_at_all_is_invalid() -> None:
    with pytest.raises(InvalidRequest, match="known groups: none"):
        place(spec(1), [])


def test_no_agent_with_the_image_is_invalid() -> None:
    agents = [slot("a", has_image=False), slot("b", group="other")]
    with pytest.raises(InvalidRequest) as info:
        place(spec(1), agents)
    assert info.value.field == "image"
    assert "'jupyter-cluster/kernel'" in str(info.value)
    assert "build" in str(info.value)


def test_agents_without_the_image_are_skipped() -> None:
    agents = [slot("big", cpu=64, mem_g=64, has_image=False), slot("small", cpu=2)]
    assert placed(place(spec(2), agents)).agents == ("small", "small")


def test_unschedulable_agents_are_skipped() -> None:
    agents = [slot("big", cpu=64, mem_g=64, schedulable=False), slot("small", cpu=2)]
    assert placed(place(spec(2), agents)).agents == ("small", "small")


def test_all_agents_unschedulable_means_pending_not_a_missing_image() -> None:
    agents = [slot("a", schedulable=False)]
    reason = pending(place(spec(2), agents)).reason
    assert "a cannot take sessions now" in reason


def test_down_agents_reporting_no_capacity_mean_pending() -> None:
    agents = [slot("a", cpu=0, mem_g=0, schedulable=False)]
    assert isinstance(place(spec(2), agents), Pending)


def test_a_session_that_fits_only_on_an_agent_that_is_down_waits() -> None:
    agents = [slot("big", cpu=8, schedulable=False), slot("small", cpu=2)]
    assert isinstance(place(spec(4), agents), Pending)


# -- GPUs ---------------------------------------------------------------------


def test_gpu_ids_are_distinct_and_skip_used_ones() -> None:
    agents = [slot("a", cpu=8, gpus=("0", "1", "2", "3"), used_gpus=("1",))]
    result = placed(place(spec(3, gpu=1), agents))
    assert result.agents == ("a",) * 3
    flat = [g for ids in result.gpu_ids for g in ids]
    assert all(len(ids) == 1 for ids in result.gpu_ids)
    assert sorted(flat) == ["0", "2", "3"]


def test_several_gpus_per_container() -> None:
    agents = [slot("a", cpu=8, gpus=("g0", "g1", "g2", "g3", "g4"), used_gpus=("g2",))]
    result = placed(place(spec(2, gpu=2), agents))
    assert [len(ids) for ids in result.gpu_ids] == [2, 2]
    flat = [g for ids in result.gpu_ids for g in ids]
    assert len(set(flat)) == 4 and "g2" not in flat


def test_gpus_limit_single_node_then_multi_node_spreads() -> None:
    agents = [
        slot("a", cpu=8, gpus=("0", "1", "2"), used_gpus=("2",)),
        slot("b", cpu=8, gpus=("0", "1", "2"), used_gpus=("0", "2")),
    ]
    assert isinstance(place(spec(3, gpu=1), agents), Pending)
    result = placed(place(spec(3, "multi-node", gpu=1), agents))
    pairs = list(zip(result.agents, result.gpu_ids, strict=True))
    assert sorted(pairs) == [("a", ("0",)), ("a", ("1",)), ("b", ("1",))]


def test_gpu_request_with_no_gpus_in_the_group_is_invalid() -> None:
    with pytest.raises(InvalidRequest) as info:
        place(spec(1, gpu=1), [slot("a", cpu=64)])
    assert info.value.field == "size"
    assert "0 GPU in all" in str(info.value)


def test_gpu_ids_are_empty_without_gpu_requests() -> None:
    agents = [slot("a", gpus=("0", "1"))]
    assert placed(place(spec(2), agents)).gpu_ids == ((), ())


def test_pending_reason_shows_free_gpus() -> None:
    agents = [slot("a", cpu=8, gpus=("0", "1"), used_gpus=("0", "1"))]
    assert "a has 8 CPU, 8g memory, 0 GPU free" in pending(place(spec(1, gpu=1), agents)).reason


# -- fractional CPU and never over-allocating --------------------------------


def test_fractional_cpu_fills_an_agent_exactly() -> None:
    agents = [slot("a", cpu=2)]
    assert placed(place(spec(4, cpu=0.5, mem="256m"), agents)).agents == ("a",) * 4
    with pytest.raises(InvalidRequest):
        place(spec(5, cpu=0.5, mem="256m"), agents)


def test_fractional_cpu_with_float_rounding_in_use() -> None:
    used = sum([0.1] * 7)  # 0.7000000000000001
    agents = [slot("a", cpu=1, used_cpu=used)]
    assert placed(place(spec(3, cpu=0.1, mem="64m"), agents)).agents == ("a",) * 3
    assert isinstance(place(spec(4, cpu=0.1, mem="64m"), agents), Pending)


def test_millicores() -> None:
    agents = [slot("a", cpu=1.5)]
    assert len(placed(place(spec(3, cpu="500m", mem="64m"), agents)).agents) == 3


@pytest.mark.parametrize("mode", ["single-node", "multi-node"])
def test_repeated_launches_never_over_allocate(mode: str) -> None:
    """Launch until Pending, booking each placement, as the store does."""
    agents = {
        "a": slot("a", cpu=3, mem_g=4, gpus=("0", "1", "2")),
        "b": slot("b", cpu=2.5, mem_g=8, gpus=("0", "1")),
    }
    request = spec(2, mode, cpu=0.75, mem="1g", gpu=1)
    per = request.resources
    launched = 0
    while True:
        result = place(request, list(agents.values()))
        if isinstance(result, Pending):
            break
        launched += 1
        for agent_id, gpu_ids in zip(result.agents, result.gpu_ids, strict=True):
            s = agents[agent_id]
            assert not set(gpu_ids) & s.used_gpu_ids
            agents[agent_id] = AgentSlot(
                id=s.id,
                resource_group=s.resource_group,
                capacity=s.capacity,
                used=Resources(s.used.cpu + per.cpu, s.used.mem + per.mem, 0, s.used.gpu + 1),
                gpu_ids=s.gpu_ids,
                used_gpu_ids=s.used_gpu_ids | set(gpu_ids),
                swarm=s.swarm,
            )
        for s in agents.values():
            assert s.used.cpu <= s.capacity.cpu + 1e-9
            assert s.used.mem <= s.capacity.mem
            assert s.used_gpu_ids <= set(s.gpu_ids)
        assert launched < 10
    # 5 GPUs in all: two sessions of two, then one GPU is left over.
    assert launched == 2


# -- multi-node placement needs one Docker Swarm -------------------------------------


def test_multi_node_spreads_only_over_agents_of_one_swarm() -> None:
    agents = [
        slot("a1", cpu=2, swarm="s1"),
        slot("a2", cpu=2, swarm="s2"),
        slot("a3", cpu=1, swarm="s1"),
    ]
    result = place(spec(3, "multi-node"), agents)
    assert isinstance(result, Placement)
    assert sorted(result.agents) == ["a1", "a1", "a3"]


def test_agents_in_no_common_swarm_make_a_multi_node_session_wait_with_why() -> None:
    agents = [slot("a1", cpu=2, swarm=""), slot("a2", cpu=2, swarm="s2")]
    result = place(spec(3, "multi-node"), agents)
    assert isinstance(result, Pending)
    assert "one Docker Swarm" in result.reason and "swarm init / join" in result.reason
    # one agent with room is fine without any Swarm: no overlay needed
    alone = place(spec(2, "multi-node"), agents)
    assert isinstance(alone, Placement) and len(set(alone.agents)) == 1


def test_a_pending_reason_names_unavailable_agents() -> None:
    agents = [slot("a1", cpu=1), slot("a2", cpu=4, schedulable=False)]
    result = place(spec(1, cpu=2), agents)
    assert isinstance(result, Pending) and "unavailable: a2" in result.reason
