"""A throwaway container in the network namespace of a session container, or of the host.

:meth:`DockerAgent.run_beside` and :meth:`DockerAgent.run_on_host` delegate here. The
egress rules need root with ``NET_ADMIN`` in a session container's network namespace
(routes) and in the host's (the firewall chain); the session container itself never
gets that capability, so a short-lived container of another image joins the
namespace (``NetworkMode: container:ID`` or ``host``), runs one script and is
removed, whatever happens. An image the agent lacks gives exit code 125 and
``docker run``'s words, with no container made.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from typing import Any

from ....errors import AgentError
from .connection import DockerConnection


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
    holding only ``capabilities``; (exit code, output)."""
    body: dict[str, Any] = {
        "Image": image,
        "User": "0",
        "Entrypoint": ["/bin/sh", "-c"],
        "Cmd": [script],
        "Labels": dict(labels),
        "HostConfig": {
            "NetworkMode": network_mode,
            "CapDrop": ["ALL"],
            "CapAdd": list(capabilities),
            "SecurityOpt": ["no-new-privileges"],
            "PidsLimit": 64,
        },
    }
    if not await conn.call(
        f"inspecting image {image}", conn.client.images.inspect(image), missing=None
    ):
        # As `docker run` says it (exit code 125): the caller advises on the image.
        return 125, f"Unable to find image '{image}' on agent {conn.config.id}"
    helper = await conn.call(action, conn.client.containers.create(body))
    try:
        await conn.call(action, helper.start())
        result = await conn.call(action, helper.wait())
        output = await conn.call(action, helper.log(stdout=True, stderr=True))
        return int(result.get("StatusCode", -1)), "".join(output)
    finally:
        with contextlib.suppress(AgentError):
            await conn.call(action, helper.delete(force=True), missing=None, gone=(404, 409))
