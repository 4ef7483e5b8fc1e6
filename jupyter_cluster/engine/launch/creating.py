"""Creating a session's containers: safely when cancelled, and main1 ahead of its network.

Called by :mod:`.bring_up` for each cold container, and by the warm pool
(:mod:`..warm_make`) for its sets' containers.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import replace

from ...errors import AgentError
from ..agents.base import DEFAULT_BRIDGE, Agent, ContainerSpec, FileEntry

log = logging.getLogger(__name__)
#: Most seconds a cancelled caller waits for Docker's answer to a container creation.
CREATE_WAIT = 30.0


async def create_container(agent: Agent, spec: ContainerSpec) -> str:
    """``agent.create_container(spec)``, except that a caller cancelled meanwhile
    waits for Docker's answer and removes what it made: Docker finishes a creation
    whose client went away, and a clean-up's label sweep could run before it."""
    creating = asyncio.ensure_future(agent.create_container(spec))
    try:
        return await asyncio.shield(creating)
    except asyncio.CancelledError:
        await asyncio.wait({creating}, timeout=CREATE_WAIT)
        if creating.done() and not creating.cancelled() and creating.exception() is None:
            with contextlib.suppress(AgentError):
                await agent.remove_container(creating.result())
        else:
            creating.cancel()
        raise


async def created_early(
    agent: Agent, spec: ContainerSpec, files: list[FileEntry], networking: asyncio.Future[None]
) -> str | None:
    """main1 created on Docker's default bridge, its files copied in, while the
    session's network is made (0.05-0.1 s: a third of the way to its start), then
    moved onto that network; its id. It never runs on the default bridge: Docker
    makes a container's endpoints when it starts. None, with nothing left, if the
    agent would not (e.g. an engine without a default bridge, or an image still
    being pulled): the caller creates it the usual way once the network exists."""
    try:
        container_id = await create_container(agent, replace(spec, network=DEFAULT_BRIDGE))
    except AgentError as exc:
        log.debug("creating %s ahead of its network: %s", spec.name, exc)
        return None
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
