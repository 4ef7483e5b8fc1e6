"""Getting an image onto agents ahead of launches: pull there, or copy from here.

Called by ``jupyter cluster image pull IMAGE [--agent ID]`` and ``jupyter cluster
image push-to-agents IMAGE [--agent ID]`` (:mod:`jupyter_cluster.cli.commands`)
with the local engine's agents. A pull asks each agent's engine to fetch the image
from its registry with the engine's credentials (as a launch does); a push streams
``docker save`` of this machine's Docker engine into ``docker load`` of every agent
that lacks the image, all at once from one read (no registry, no temporary file,
memory bounded by a few pieces per agent). Each agent's outcome is reported; one
agent failing never stops the others.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass

from ..core.units import format_size
from ..errors import AgentError, LaunchFailed, NotFound
from .agents.base import Agent
from .launch.pulling import pull_on

#: Pieces of the saved image waiting for one slow agent before the reader waits.
QUEUED_PIECES = 8


@dataclass(frozen=True)
class Outcome:
    """What happened on one agent: ``done`` (it has the image now), and how."""

    agent: str
    done: bool
    text: str


Say = Callable[[str], None]


async def _present(agents: Sequence[Agent], image: str) -> dict[str, bool | str]:
    """Per agent: whether it has ``image``, or why it could not be asked."""

    async def one(agent: Agent) -> bool | str:
        try:
            return await agent.has_image(image)
        except AgentError as exc:
            return exc.message

    found = await asyncio.gather(*(one(a) for a in agents))
    return {a.id: f for a, f in zip(agents, found, strict=True)}


async def pull_to_agents(
    agents: Sequence[Agent],
    image: str,
    auth: Mapping[str, str] | None,
    timeout: float,
    say: Say,
) -> list[Outcome]:
    """Pull ``image`` on each of ``agents`` that lacks it, concurrently."""
    present = await _present(agents, image)

    async def one(agent: Agent) -> Outcome:
        had = present[agent.id]
        if isinstance(had, str):
            return Outcome(agent.id, False, f"failed: {had}")
        if had:
            return Outcome(agent.id, True, "has it already")
        began = time.monotonic()

        async def report(agent_id: str, done: str) -> None:
            say(f"{agent_id}: {done}")

        try:
            await pull_on(agent, image, auth, timeout, report)
        except LaunchFailed as exc:
            return Outcome(agent.id, False, f"failed: {exc}")
        return Outcome(agent.id, True, f"pulled in {time.monotonic() - began:.1f} s")

    return list(await asyncio.gather(*(one(a) for a in agents)))


async def _offer(
    queue: asyncio.Queue[bytes | None], piece: bytes | None, load: asyncio.Task
) -> None:
    """Queue ``piece`` for a loading agent, unless its load has ended meanwhile."""
    if load.done():
        return
    put = asyncio.ensure_future(queue.put(piece))
    await asyncio.wait({put, load}, return_when=asyncio.FIRST_COMPLETED)
    if not put.done():
        put.cancel()


async def _pieces(queue: asyncio.Queue[bytes | None]) -> AsyncIterator[bytes]:
    while True:
        piece = await queue.get()
        if piece is None:
            return
        yield piece


async def push_to_agents(source: Agent, agents: Sequence[Agent], image: str) -> list[Outcome]:
    """Copy ``image`` from ``source`` (this machine's engine) to each of ``agents``
    that lacks it: one ``docker save`` stream, fed to every ``docker load`` at once."""
    if not await source.has_image(image):
        raise NotFound(
            f"{image} is not on this machine's Docker engine: build it (docker build, or "
            "jupyter cluster image build for the default image) or pull it first"
        )
    present = await _present(agents, image)
    outcomes = {}
    for agent_id, had in present.items():
        if isinstance(had, str):
            outcomes[agent_id] = Outcome(agent_id, False, f"failed: {had}")
        elif had:
            outcomes[agent_id] = Outcome(agent_id, True, "has it already")
    lacking = [a for a in agents if present[a.id] is False]
    if not lacking:
        return [outcomes[a.id] for a in agents]
    queues: dict[str, asyncio.Queue[bytes | None]] = {
        a.id: asyncio.Queue(QUEUED_PIECES) for a in lacking
    }
    loads = {
        a.id: asyncio.ensure_future(a.load_image(image, _pieces(queues[a.id]))) for a in lacking
    }
    began, size, source_error = time.monotonic(), 0, ""
    try:
        async for piece in source.save_image(image):
            size += len(piece)
            await asyncio.gather(*(_offer(queues[i], piece, loads[i]) for i in loads))
            if all(load.done() for load in loads.values()):
                break
    except AgentError as exc:
        source_error = exc.message
    finally:
        await asyncio.gather(*(_offer(queues[i], None, loads[i]) for i in loads))
    results = await asyncio.gather(*loads.values(), return_exceptions=True)
    took = time.monotonic() - began
    for agent, result in zip(lacking, results, strict=True):
        if isinstance(result, BaseException):
            why = source_error or (
                result.message if isinstance(result, AgentError) else str(result)
            )
            outcomes[agent.id] = Outcome(agent.id, False, f"failed: {why}")
        elif source_error:
            outcomes[agent.id] = Outcome(agent.id, False, f"failed: {source_error}")
        elif (await _present([agent], image))[agent.id] is not True:
            outcomes[agent.id] = Outcome(agent.id, False, "failed: the load left no such image")
        else:
            outcomes[agent.id] = Outcome(
                agent.id, True, f"loaded ({format_size(size)}) in {took:.1f} s"
            )
    return [outcomes[a.id] for a in agents]
