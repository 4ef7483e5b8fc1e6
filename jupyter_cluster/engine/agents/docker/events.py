"""Following Docker's event stream for out-of-memory kills (``GET /events``).

Used by :meth:`~.docker.DockerAgent.oom_events` (kept apart so the agent stays
small). Our containers run with an init process, so the kernel's OOM killer
usually ends the process that grew (a rank, the kernel), not PID 1: the container
keeps running and its state never says ``OOMKilled``; only this event tells.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Mapping
from typing import Any

import aiohttp
from aiodocker.exceptions import DockerError

from ..base import OomEvent
from .connection import DockerConnection


def oom_query(labels: Mapping[str, str], since: float | None) -> dict[str, Any]:
    """The query of ``GET /events`` for OOM kills in containers with all of ``labels``."""
    filters = {
        "type": ["container"],
        "event": ["oom"],
        "label": [f"{k}={v}" for k, v in labels.items()],
    }
    params: dict[str, Any] = {"filters": json.dumps(filters)}
    if since is not None:
        params["since"] = f"{since:.9f}"
    return params


def oom_event(data: Any) -> OomEvent | None:
    """The :class:`OomEvent` of one decoded event, or None for anything else."""
    if not isinstance(data, dict) or data.get("Action") != "oom":
        return None
    container_id = data.get("id") or (data.get("Actor") or {}).get("ID")
    if not container_id:
        return None
    nanos = data.get("timeNano")
    return OomEvent(str(container_id), nanos / 1e9 if nanos else float(data.get("time") or 0))


async def follow_oom(
    conn: DockerConnection, labels: Mapping[str, str], since: float | None
) -> AsyncIterator[OomEvent]:
    """Yield the OOM kills Docker reports, one JSON object per line, until it closes
    the stream; failures become AgentError. Over the stream client: no read timeout
    (the stream is silent for as long as nothing runs out of memory)."""
    action = "following its events"
    query = conn.stream_client._query("events", params=oom_query(labels, since))
    try:
        async with query as response, response:
            conn.answered()
            async for line in response.content:
                if not line.strip():
                    continue
                try:
                    event = oom_event(json.loads(line))
                except ValueError:
                    continue
                if event is not None:
                    yield event
    except (DockerError, aiohttp.ClientError, OSError, asyncio.TimeoutError) as exc:
        raise conn.failure(action, exc) from exc
