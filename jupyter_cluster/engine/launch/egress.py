"""Egress rules, applied: a helper beside each container sets them (``restrict_egress``).

See :mod:`jupyter_cluster.core.egress` for what is denied and how; the launcher
calls :func:`apply_egress_rules` for every container right after it starts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ...core.egress import READY_MARKER, rules_script
from ...errors import LaunchFailed
from ..agents.base import Agent, FileEntry


async def apply_egress_rules(
    agent: Agent,
    container_id: str,
    host: str,
    denied: Sequence[str],
    image: str,
    labels: Mapping[str, str],
) -> None:
    """Deny ``denied`` to a started container, then let its start-up go on; raises
    LaunchFailed saying what went wrong (e.g. ``image`` lacks iproute2)."""
    script = rules_script(denied, agent.config.address)
    code, output = await agent.run_beside(container_id, image, script, ("NET_ADMIN",), labels)
    if code != 0:
        raise LaunchFailed(
            f"{host}: could not apply the egress rules (exit code {code}): "
            f"{output.strip()[-300:]}; ContainerHardening.egress_image must have iproute2"
        )
    await agent.put_files(container_id, [FileEntry(READY_MARKER, b"", 0o644)])
