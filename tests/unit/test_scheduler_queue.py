"""Tests of jupyter_cluster.core.queue: placing a whole queue gives exactly what placing
each session in turn gives, only faster; and waiting reasons stay short."""

from __future__ import annotations

import time
from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from jupyter_cluster.core.models import LaunchSpec
from jupyter_cluster.core.queue import Refused, place_each, place_queue
from jupyter_cluster.core.resources import Resources
from jupyter_cluster.core.scheduler import AgentSlot, Pending, Placement, place
from jupyter_cluster.core.waiting_reasons import DESCRIBED_AGENTS
from jupyter_cluster.errors import InvalidRequest

from .support import agent_slots

GIB = 1024**3


@st.composite
def queues(draw: st.DrawFn) -> tuple[list[LaunchSpec], list[AgentSlot]]:
    """Up to 8 agents and up to 25 sessions of a few shapes, modes and groups."""
    swarms = st.sampled_from(["swarm", "swarm", "other", ""])
    agents = [
        replace(draw(agent_slots(i)), swarm=draw(swarms)) for i in range(draw(st.integers(1, 8)))
    ]
    specs = [
        LaunchSpec.create(
            image="img",
            size=draw(st.integers(1, 4)),
            mode=draw(st.sampled_from(["single-node", "multi-node"])),
            cpu=draw(st.sampled_from([0.25, 0.5, 1, 2])),
            mem=draw(st.sampled_from(["256m", "1g", "2g"])),
            gpu=draw(st.sampled_from([0] * 5 + [1])),
            resource_group=draw(st.sampled_from(["default"] * 5 + ["other"])),
        )
        for _ in range(draw(st.integers(1, 25)))
    ]
    return specs, agents


def _outcome(run: object, *args: object, **kw: object) -> object:
    try:
        return run(*args, **kw)  # type: ignore[operator]
    except InvalidRequest as exc:
        return ("invalid", exc.field, str(exc))


@settings(max_examples=500, deadline=None)
@given(queues(), st.booleans())
def test_place_queue_decides_as_place_each(
    queue: tuple[list[LaunchSpec], list[AgentSlot]], backfill: bool
) -> None:
    specs, agents = queue
    expected = _outcome(place_each, specs, agents, backfill=backfill)
    assert _outcome(place_queue, specs, agents, backfill=backfill) == expected


def _agent(i: int, cpu: float = 4, mem_g: int = 8) -> AgentSlot:
    return AgentSlot(f"a{i:04}", "default", Resources(cpu, mem_g * GIB, 0, 0), swarm="s")


def test_first_in_first_out_unless_backfill() -> None:
    agents = [_agent(0, cpu=2), _agent(1, cpu=2)]
    big = LaunchSpec.create(image="img", size=4, mode="multi-node", cpu=1, mem="1g")
    small = LaunchSpec.create(image="img", size=1, cpu=1, mem="1g")
    with_room = LaunchSpec.create(image="img", size=1, cpu=1, mem="1g")
    queue = [small, big, with_room]
    fifo = place_queue(queue, agents)
    assert isinstance(fifo[0], Placement) and isinstance(fifo[1], Pending)
    assert isinstance(fifo[2], Pending) and fifo[2].reason.startswith("waiting behind 1")
    backfilled = place_queue(queue, agents, backfill=True)
    assert isinstance(backfilled[2], Placement)


def test_waiting_reason_names_only_the_roomiest_agents() -> None:
    agents = [
        AgentSlot(f"a{i:04}", "default", Resources(4, 8 * GIB, 0, 0), Resources(1 + i % 3, 0, 0, 0))
        for i in range(40)
    ]
    reason = place(LaunchSpec.create(image="img", size=4, cpu=1, mem="1g"), agents)
    assert isinstance(reason, Pending)
    assert reason.reason.count(" has ") == DESCRIBED_AGENTS
    assert f"{40 - DESCRIBED_AGENTS} more agent(s) with less room" in reason.reason
    assert "a0000 has 3 CPU" in reason.reason  # the roomiest come first


def test_a_long_queue_on_many_agents_is_placed_quickly() -> None:
    """Not a timing goal (see bench/bench_scheduler.py): a regression guard that the
    queue is not placed by looking at every agent for every session."""
    agents = [_agent(i, cpu=8, mem_g=32) for i in range(500)]
    specs = [LaunchSpec.create(image="img", size=2, cpu=1, mem="1g") for _ in range(3000)]
    start = time.perf_counter()
    results = place_queue(specs, agents, backfill=True)
    assert time.perf_counter() - start < 10  # ~0.1 s; place_each takes ~10x longer
    assert sum(isinstance(r, Placement) for r in results) == 2000


@st.composite
def image_queues(
    draw: st.DrawFn,
) -> tuple[list[LaunchSpec], list[AgentSlot], dict[str, list[AgentSlot]]]:
    """As :func:`queues`, with two images each agent has, may pull or cannot run, and
    a host-network group (one container per agent) some of the time."""
    specs, agents = draw(queues())
    hosted = draw(st.sampled_from(["", "other"]))
    agents = [
        replace(a, one_container=True, containers=draw(st.integers(0, 1)))
        if a.resource_group == hosted
        else a
        for a in agents
    ]
    images: dict[str, list[AgentSlot]] = {}
    for image in ("img", "big"):
        flags = st.sampled_from([(True, True), (True, False), (False, False)])
        images[image] = [
            replace(a, has_image=h, image_local=x) for a in agents for h, x in [draw(flags)]
        ]
    specs = [replace(s, image=draw(st.sampled_from(["img", "big", "other"]))) for s in specs]
    return specs, agents, images


@settings(max_examples=500, deadline=None)
@given(image_queues(), st.booleans())
def test_place_queue_prefers_agents_with_the_image_as_place_does(
    queue: tuple[list[LaunchSpec], list[AgentSlot], dict[str, list[AgentSlot]]], backfill: bool
) -> None:
    specs, agents, images = queue
    expected = _outcome(place_each, specs, agents, backfill=backfill, images=images)
    got = _outcome(place_queue, specs, agents, backfill=backfill, images=images)
    assert got == expected


def test_a_session_that_can_never_fit_is_refused_and_holds_up_nobody() -> None:
    agents = [_agent(0, cpu=2)]
    huge = LaunchSpec.create(image="img", size=1, cpu=8, mem="1g")
    small = LaunchSpec.create(image="img", size=1, cpu=1, mem="1g")
    results = place_queue([huge, small], agents, refuse=True)
    assert isinstance(results[0], Refused) and "can ever hold" in results[0].reason
    assert isinstance(results[1], Placement)


def test_a_host_network_agent_holds_one_container() -> None:
    agents = [replace(_agent(i, cpu=8), one_container=True, swarm="") for i in range(3)]
    pair = LaunchSpec.create(image="img", size=2, mode="multi-node", cpu=1, mem="1g")
    one = LaunchSpec.create(image="img", size=1, cpu=1, mem="1g")
    results = place_queue([pair, one, one], agents)
    assert isinstance(results[0], Placement) and results[0].agent_count == 2
    assert isinstance(results[1], Placement) and isinstance(results[2], Pending)
