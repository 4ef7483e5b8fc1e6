"""The site's queue orders (core.queue_order), as properties over random queues:
FIFO, priority (higher first, FIFO among equals) and dominant-resource fair share
(the owner with the smallest dominant share goes next; each owner's sessions in
order; ties first in, first out)."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jupyter_cluster.core.models import LaunchSpec
from jupyter_cluster.core.queue_order import Waiting, dominant_share, order_queue
from jupyter_cluster.core.resources import Resources

GIB = 1024**3
CAPACITY = {"default": Resources(64, 256 * GIB, 0, 4), "gpu": Resources(16, 64 * GIB, 0, 0)}
OWNERS = ["ann", "bob", "cy", "dee"]


@st.composite
def queues(draw: st.DrawFn) -> tuple[list[Waiting], dict[tuple[str, str], Resources]]:
    """Up to 30 waiting sessions of 4 owners in 2 groups, some created at the same
    time, and what each owner already holds."""
    waiting = []
    for i in range(draw(st.integers(0, 30))):
        spec = LaunchSpec.create(
            image="img",
            size=draw(st.integers(1, 3)),
            cpu=draw(st.sampled_from([0.5, 1, 4])),
            mem=draw(st.sampled_from(["1g", "8g"])),
            gpu=draw(st.sampled_from([0, 0, 1])),
            resource_group=draw(st.sampled_from(["default", "default", "gpu"])),
            priority=draw(st.integers(-2, 2)),
        )
        created = float(draw(st.integers(0, 10)))
        waiting.append(Waiting(f"s{i:02}", draw(st.sampled_from(OWNERS)), created, spec))
    held = {
        (group, owner): Resources(
            draw(st.integers(0, 16)), draw(st.integers(0, 64)) * GIB, 0, draw(st.integers(0, 2))
        )
        for group in CAPACITY
        for owner in OWNERS
        if draw(st.booleans())
    }
    return waiting, held


def _groups(ordered: Sequence[Waiting]) -> dict[str, list[Waiting]]:
    found: dict[str, list[Waiting]] = {}
    for w in ordered:
        found.setdefault(w.spec.resource_group, []).append(w)
    return found


def _check_common(waiting: list[Waiting], ordered: list[Waiting]) -> None:
    assert sorted(w.id for w in ordered) == sorted(w.id for w in waiting)
    groups = [w.spec.resource_group for w in ordered]
    assert groups == sorted(groups)  # each group's queue in one piece


@settings(max_examples=300, deadline=None)
@given(queues())
def test_fifo_is_creation_order(queue: tuple[list[Waiting], dict]) -> None:
    waiting, held = queue
    ordered = order_queue(waiting, "fifo", CAPACITY, held)
    _check_common(waiting, ordered)
    for members in _groups(ordered).values():
        keys = [w.fifo_key for w in members]
        assert keys == sorted(keys)


@settings(max_examples=300, deadline=None)
@given(queues())
def test_priority_goes_first_then_fifo(queue: tuple[list[Waiting], dict]) -> None:
    waiting, held = queue
    ordered = order_queue(waiting, "priority", CAPACITY, held)
    _check_common(waiting, ordered)
    for members in _groups(ordered).values():
        for a, b in itertools.pairwise(members):
            assert a.spec.priority >= b.spec.priority
            if a.spec.priority == b.spec.priority:
                assert a.fifo_key < b.fifo_key


def _demand(w: Waiting) -> Resources:
    return w.spec.resources.times(w.spec.size)


@settings(max_examples=300, deadline=None)
@given(queues())
def test_fair_share_serves_the_owner_with_the_smallest_dominant_share(
    queue: tuple[list[Waiting], dict],
) -> None:
    waiting, held = queue
    ordered = order_queue(waiting, "fair-share", CAPACITY, held)
    _check_common(waiting, ordered)
    for group, members in _groups(ordered).items():
        capacity = CAPACITY[group]
        now = {o: held.get((group, o), Resources(0, 0, 0, 0)) for o in OWNERS}
        left = list(members)
        for chosen in members:
            # Each owner's next session is its earliest one still waiting.
            nexts = {}
            for w in sorted(left, key=lambda w: w.fifo_key):
                nexts.setdefault(w.owner, w)
            assert nexts[chosen.owner] is chosen
            share = dominant_share(now[chosen.owner], capacity)
            for owner, w in nexts.items():
                other = dominant_share(now[owner], capacity)
                assert share <= other
                if share == other:
                    assert chosen.fifo_key <= w.fifo_key
            d = _demand(chosen)
            h = now[chosen.owner]
            now[chosen.owner] = Resources(h.cpu + d.cpu, h.mem + d.mem, 0, h.gpu + d.gpu)
            left.remove(chosen)


def _waiting(sid: str, owner: str, created: float, cpu: float = 1, priority: int = 0) -> Waiting:
    spec = LaunchSpec.create(image="img", cpu=cpu, mem="1g", priority=priority)
    return Waiting(sid, owner, created, spec)


def test_fair_share_lets_a_light_user_pass_a_heavy_one() -> None:
    heavy = [_waiting(f"h{i}", "heavy", float(i)) for i in range(4)]
    light = _waiting("l0", "light", 10.0)
    held = {("default", "heavy"): Resources(32, 32 * GIB, 0, 0)}
    ordered = order_queue([*heavy, light], "fair-share", CAPACITY, held)
    assert [w.id for w in ordered] == ["l0", "h0", "h1", "h2", "h3"]
    # With nothing held, their sessions interleave: each one placed counts.
    both = [*heavy, _waiting("l0", "light", 10.0), _waiting("l1", "light", 11.0)]
    ordered = order_queue(both, "fair-share", CAPACITY, {})
    assert [w.id for w in ordered] == ["h0", "l0", "h1", "l1", "h2", "h3"]


def test_an_unknown_order_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown queue order"):
        order_queue([], "lifo")
