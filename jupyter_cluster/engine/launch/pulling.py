"""Getting a launch's image onto the agents it was placed on: the PULLING step.

Called by :func:`~.bring_up.bring_up` while the session's network is made: every
placed agent that lacks the image pulls it from its registry, concurrently, with
the engine's credentials for that registry and within ``image_pull_timeout``.
Progress goes to the launch's :data:`PullReport` (the manager shows it as the
containers' PULLING status and reason). A failed pull fails the launch with the
agent, the image and the registry's answer; the other pulls are cancelled.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from ...asyncwait import within
from ...core.images import PullTally, pull_failure
from ...errors import AgentError, LaunchFailed
from ..agents.base import Agent

#: Called as an agent's pull progresses: (agent id, what it has done so far).
PullReport = Callable[[str, str], Awaitable[None]]
#: Seconds between two progress reports of one agent's pull.
REPORT_EVERY = 0.5


async def missing_on(agents: Mapping[str, Agent], placed: Sequence[str], image: str) -> list[str]:
    """The agents of ``placed`` that do not have ``image``."""
    found = await asyncio.gather(*(agents[a].has_image(image) for a in placed))
    return [a for a, present in zip(placed, found, strict=True) if not present]


async def pull_on(
    agent: Agent,
    image: str,
    auth: Mapping[str, str] | None,
    timeout: float,
    report: PullReport | None = None,
) -> None:
    """Pull ``image`` on ``agent`` within ``timeout`` seconds, reporting progress;
    raises :class:`LaunchFailed` saying why it could not."""
    tally = PullTally()
    last = 0.0

    async def seen(message: Mapping[str, Any]) -> None:
        nonlocal last
        tally.add(message)
        now = time.monotonic()
        if report is not None and now - last >= REPORT_EVERY:
            last = now
            await report(agent.id, tally.describe())

    if report is not None:
        await report(agent.id, "pulling")
    try:
        await within(agent.pull_image(image, auth, seen), timeout)
    except asyncio.TimeoutError:
        answer = f"not done within {timeout:g} s (timeout; {tally.describe()})"
        raise LaunchFailed(pull_failure(agent.id, image, answer)) from None
    except AgentError as exc:
        answer = exc.message.split(" failed: ", 1)[-1]
        raise LaunchFailed(pull_failure(agent.id, image, answer)) from exc


async def pull_missing(
    agents: Mapping[str, Agent],
    placed: Sequence[str],
    image: str,
    auth: Mapping[str, str] | None,
    timeout: float,
    report: PullReport | None = None,
) -> list[str]:
    """Pull ``image`` on each of ``placed`` that lacks it, concurrently; the agents
    that pulled. The first failure cancels the other pulls and is raised."""
    try:
        missing = await missing_on(agents, placed, image)
    except AgentError as exc:
        raise LaunchFailed(f"could not check whether the agents have {image}: {exc}") from exc
    tasks = [
        asyncio.ensure_future(pull_on(agents[a], image, auth, timeout, report)) for a in missing
    ]
    try:
        for done in asyncio.as_completed(tasks):
            await done
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    return missing
