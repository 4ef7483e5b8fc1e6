"""A throwaway container in the network namespace of a session container, or of the host.

:meth:`DockerAgent.run_beside` and :meth:`DockerAgent.run_on_host` delegate here. The
egress rules need root with ``NET_ADMIN`` in a session container's network namespace
(routes) and in the host's (the firewall chain); the session container itself never
gets that capability, so a short-lived container of another image joins the
namespace (``NetworkMode: container:ID`` or ``host``), runs one script and is
removed, whatever happens: Docker removes it once it ends (``AutoRemove``, as
``docker run --rm``), so an engine killed while it runs leaves nothing behind; its
exit code comes from a wait for that removal asked before it starts, and its output
from its streams, attached before it starts (as ``docker run`` does). An image the
agent lacks gives exit code 125 and ``docker run``'s words, with no container made.

An engine killed between creating a helper and starting it leaves it created, never
run, which Docker does not remove. Every helper is stamped with its engine's clock
(:data:`STARTED_LABEL`), and a helper run also removes, at most once a minute per
agent host and process, the helpers stamped more than :data:`STALE` seconds before:
never one that another engine may still be starting or reading.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Mapping, Sequence
from typing import Any

import aiohttp
from aiodocker.exceptions import DockerError
from aiodocker.stream import Stream

from ....core import naming
from ....errors import AgentError
from .connection import DockerConnection

#: On every helper: when its engine made it (seconds since the epoch, that engine's
#: clock); Docker's own creation time is the agent host's clock.
STARTED_LABEL = naming.LABEL_PREFIX + "helper-started"
#: Seconds after its stamp when a helper left behind is removed: a helper's script
#: takes well under one, and another engine may still start it or read its output.
STALE = 120.0
#: Seconds between two sweeps of one agent host by one process.
SWEEP_EVERY = 60.0
#: Agent hosts (Docker URLs, "local" for the socket) this process swept: when
#: (monotonic clock).
_SWEPT: dict[str, float] = {}


async def run_beside(
    conn: DockerConnection,
    container_id: str,
    image: str,
    script: str,
    capabilities: Sequence[str],
    labels: Mapping[str, str],
) -> tuple[int, str]:
    """Run ``script`` as root beside ``container_id``; (exit code, output)."""
    action = f"running a helper beside container {container_id[:12]}"
    network = f"container:{container_id}"
    return await run_helper(conn, network, image, script, capabilities, labels, action)


async def run_helper(
    conn: DockerConnection,
    network_mode: str,
    image: str,
    script: str,
    capabilities: Sequence[str],
    labels: Mapping[str, str],
    action: str,
) -> tuple[int, str]:
    """Run ``script`` as root in a throwaway container of ``image`` on ``network_mode``,
    holding only ``capabilities``; (exit code, output). Sweeps the helpers left
    behind on that host meanwhile (see the module docstring)."""
    stamped = {**labels, STARTED_LABEL: f"{time.time():.0f}"}
    body: dict[str, Any] = {
        "Image": image,
        "User": "0",
        "Entrypoint": ["/bin/sh", "-c"],
        "Cmd": [script],
        "Labels": stamped,
        "HostConfig": {
            "NetworkMode": network_mode,
            "CapDrop": ["ALL"],
            "CapAdd": list(capabilities),
            "SecurityOpt": ["no-new-privileges"],
            "PidsLimit": 64,
            "AutoRemove": True,
        },
    }
    result, _ = await asyncio.gather(_run(conn, body, action), sweep_left_helpers(conn))
    return result


async def _run(conn: DockerConnection, body: dict[str, Any], action: str) -> tuple[int, str]:
    image = body["Image"]
    if not await conn.call(
        f"inspecting image {image}", conn.client.images.inspect(image), missing=None
    ):
        # As `docker run` says it (exit code 125): the caller advises on the image.
        return 125, f"Unable to find image '{image}' on agent {conn.config.id}"
    helper = await conn.call(action, conn.client.containers.create(body))
    removed = False
    try:
        # Asked before the start, so the removal cannot pass unseen (Docker answers
        # the headers at once, the status when the helper is gone).
        wait = f"containers/{helper.id}/wait"
        async with conn.stream_client._query(
            wait, "POST", params={"condition": "removed"}
        ) as waiting:
            # Attached before the start too, as `docker run --rm` does: a helper that
            # ends at once may be removed before its log could be asked for.
            async with helper.attach(stdout=True, stderr=True, logs=True) as attached:
                await conn.call(action, helper.start())
                output = await _output(attached)
            result = await waiting.json()
        removed = True
        return int(result.get("StatusCode", -1)), output
    except (DockerError, aiohttp.ClientError, OSError) as exc:
        raise conn.failure(action, exc) from exc
    finally:
        if not removed:  # never started, or this call was cancelled: kill it now
            with contextlib.suppress(AgentError):
                await conn.call(action, helper.delete(force=True), missing=None, gone=(404, 409))


async def sweep_left_helpers(conn: DockerConnection) -> None:
    """Remove the helpers on ``conn``'s host stamped more than :data:`STALE` seconds
    ago, unless this process swept it in the last :data:`SWEEP_EVERY` seconds. Best
    effort: an agent that does not answer is left as it is. :func:`run_helper`
    runs it beside every helper."""
    key = conn.config.url or "local"
    now = time.monotonic()
    if key in _SWEPT and now - _SWEPT[key] < SWEEP_EVERY:
        return
    _SWEPT[key] = now
    with contextlib.suppress(AgentError):
        found = await conn.call(
            "listing helpers",
            conn.client.containers.list(all=True, filters={"label": [STARTED_LABEL]}),
        )
        wall = time.time()
        for helper in found:
            try:
                started = float((helper._container.get("Labels") or {})[STARTED_LABEL])
            except (KeyError, ValueError):
                started = 0.0  # not a stamp to trust: as old as can be
            if wall - started > STALE:
                await conn.call(
                    "removing a helper left behind",
                    helper.delete(force=True),
                    missing=None,
                    gone=(404, 409),
                )


async def _output(attached: Stream) -> str:
    """What a helper prints (stdout and stderr, as they came), read from its attached
    streams until it ends; what was read when the connection failed."""
    pieces: list[bytes] = []
    with contextlib.suppress(DockerError, aiohttp.ClientError):
        while (message := await attached.read_out()) is not None:
            pieces.append(message.data)
    return b"".join(pieces).decode(errors="replace")
