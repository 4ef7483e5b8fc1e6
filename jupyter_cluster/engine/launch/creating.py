"""Creating what a launch makes on Docker, safely when cancelled; and main1 (and the
carrier of the subs' files) ahead of their network.

:func:`made` is every creation's guard: :func:`create_container` (each cold
container of :mod:`.bring_up`, the warm pool's sets in :mod:`..warm_make`) and the
session network (:mod:`.session_network`) go through it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import TypeVar

from ...asyncwait import through
from ...errors import AgentError
from ..agents.base import DEFAULT_BRIDGE, Agent, ContainerSpec, FileEntry

log = logging.getLogger(__name__)
T = TypeVar("T")
#: Most seconds a cancelled caller waits for Docker's answer to a creation.
ANSWER_WAIT = 30.0


async def made(call: Awaitable[T], undo: Callable[[T], Awaitable[None]] | None = None) -> T:
    """Await ``call``, a Docker request that makes something (a container, a network).

    Docker finishes a creation whose client went away, so a caller cancelled
    meanwhile first waits for Docker's answer (:data:`ANSWER_WAIT` seconds at most)
    and applies ``undo`` to what was made, if given; without ``undo`` the caller's
    clean-up (a sweep by label) finds it, since it exists by then. Then the
    cancellation goes on.
    """
    task = asyncio.ensure_future(call)
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        await through(_undone(task, undo))  # not cut short by a second cancel
        raise


async def _undone(task: asyncio.Future[T], undo: Callable[[T], Awaitable[None]] | None) -> None:
    """:func:`made`'s caller left: wait for Docker's answer to ``task`` (at most
    :data:`ANSWER_WAIT` seconds), then ``undo`` what it made."""
    await asyncio.wait({task}, timeout=ANSWER_WAIT)
    if not task.done():
        task.cancel()
    elif not task.cancelled() and task.exception() is None and undo is not None:
        with contextlib.suppress(AgentError):
            await undo(task.result())


async def create_container(agent: Agent, spec: ContainerSpec) -> str:
    """``agent.create_container(spec)``; a caller cancelled meanwhile removes what
    Docker made (see :func:`made`)."""
    return await made(agent.create_container(spec), agent.remove_container)


async def created_early(
    agent: Agent,
    spec: ContainerSpec,
    files: list[FileEntry],
    networking: asyncio.Future[None],
    on_created: Callable[[], None] | None = None,
) -> str | None:
    """A container (main1, or the carrier of a session's start-up files) created on
    Docker's default bridge, its files copied in, while the session's network is made
    (0.05-0.1 s: a third of the way to main1's start), then moved onto that network;
    its id. ``on_created``, if given, is called once it exists. It never runs on the
    default bridge: Docker makes a container's endpoints when it starts. None, with
    nothing left, if the agent would not (e.g. an engine without a default bridge,
    or an image still being pulled): the caller creates it the usual way once the
    network exists."""
    try:
        container_id = await create_container(agent, replace(spec, network=DEFAULT_BRIDGE))
    except AgentError as exc:
        log.debug("creating %s ahead of its network: %s", spec.name, exc)
        return None
    if on_created is not None:
        on_created()
    try:
        await agent.put_files(container_id, files)
        await asyncio.shield(networking)
        await agent.move_to_network(container_id, spec.network, spec.aliases)
    except AgentError as exc:
        log.debug("moving %s onto its network: %s", spec.name, exc)
        await agent.remove_container(container_id)
        await asyncio.shield(networking)
        return None
    return container_id
