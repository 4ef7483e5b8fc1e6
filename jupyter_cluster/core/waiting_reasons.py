"""Why a session waits: the PENDING reasons the schedulers give, bounded in length.

Used by :mod:`jupyter_cluster.core.scheduler` (one session at a time) and
:mod:`jupyter_cluster.core.queue` (the whole queue); the reason is what ``show``,
the sidebar and the events say about a waiting session. Pure.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .agent_slot import AgentSlot
from .models import LaunchSpec
from .units import format_size


@dataclass(frozen=True)
class Pending:
    """The session cannot start now; ``reason`` says why, for the user."""

    reason: str


#: Agents named in a waiting reason (the roomiest first); the others are counted.
DESCRIBED_AGENTS = 5


def describe_free(ranked: Sequence[AgentSlot], total: int, down: Sequence[str] = ()) -> str:
    """What the roomiest agents have free (``ranked``: at most :data:`DESCRIBED_AGENTS`
    of the ``total`` eligible ones, roomiest first) and which ones are down.

    Bounded, so a reason stays short (and cheap) whatever the number of agents.
    """
    parts = []
    for s in ranked[:DESCRIBED_AGENTS]:
        if s.one_container and s.containers:
            parts.append(f"{s.id} runs a host-network container")
            continue
        f = s.free()
        gpu = f", {f.gpu} GPU" if s.gpu_ids else ""
        parts.append(f"{s.id} has {f.cpu:g} CPU, {format_size(max(f.mem, 0))} memory{gpu} free")
    more = total - len(parts)
    if more > 0:
        parts.append(f"{more} more agent(s) with less room")
    if down:
        shown = ", ".join(down[:DESCRIBED_AGENTS])
        extra = len(down) - DESCRIBED_AGENTS
        parts.append(f"unavailable: {shown}" + (f" and {extra} more" if extra > 0 else ""))
    return "; ".join(parts)


def swarm_pending(spec: LaunchSpec, slots: Sequence[AgentSlot]) -> Pending:
    """Why a multi-node session waits although its group (``slots``) has room in total."""
    notes = sorted({f"{a.id}: {a.swarm_note}" for a in slots if a.swarm_note})
    why = "; ".join(notes) if notes else "(docker swarm init / join them)"
    return Pending(
        f"waiting for room for {spec.size} x ({spec.resources.describe()}) on agents of one "
        f"Docker Swarm in group {spec.resource_group!r}: the agents with room are not nodes of "
        f"the same Swarm {why}; see `jupyter cluster agents`"
    )


def single_node_pending(
    spec: LaunchSpec, ranked: Sequence[AgentSlot], total: int, down: Sequence[str]
) -> Pending:
    """Why a single-node session waits (``ranked``: the roomiest agents first)."""
    return Pending(
        f"waiting for one agent of group {spec.resource_group!r} with room for "
        f"{spec.size} x ({spec.resources.describe()}): {describe_free(ranked, total, down)}"
    )


def multi_node_pending(
    spec: LaunchSpec, ranked: Sequence[AgentSlot], total: int, down: Sequence[str]
) -> Pending:
    """Why a multi-node session waits: the whole group has too little room."""
    return Pending(
        f"waiting for room for {spec.size} x ({spec.resources.describe()}) across group "
        f"{spec.resource_group!r}: {describe_free(ranked, total, down)}"
    )


def ordinal(n: int) -> str:
    """1st, 2nd, 3rd, 4th, …, 11th, 12th, 13th, 21st."""
    if 10 <= n % 100 <= 20:
        return f"{n}th"
    return f"{n}{ {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th') }"


def queue_reason(
    spec: LaunchSpec, position: int, order: str, *, why: str = "", ahead: str = ""
) -> str:
    """Why a session waits in the queue: its place in its group's queue (``order``:
    how the queue is ordered, e.g. "fair share") and what it waits for.

    ``why``: the scheduler's reason, for a session tried now (the head of the
    queue, or any with backfill); ``ahead``: the first session it waits behind
    otherwise, named only when it is the same owner's (names are per owner).
    Written by the store's queue pass.
    """
    where = f"{ordinal(position)} in the queue of resource group {spec.resource_group} ({order})"
    if why:
        return f"{where}: {why}"
    on = "one agent" if spec.mode.value == "single-node" else "agents"
    earlier = "earlier session(s)" if order.startswith("first in") else "session(s) ahead of it"
    return (
        f"{where}; needs {spec.size} x ({spec.resources.describe()}) on {on} with room; "
        f"waiting behind {position - 1} {earlier} (next: {ahead})"
    )
