"""Egress rules, applied: a helper beside each container sets them (``restrict_egress``).

See :mod:`jupyter_cluster.core.egress` for what is denied and how. The launcher calls
:func:`wall_off_hosts` before it creates a restricted session's network (the agent
host's firewall chain: checked at every launch, since a reboot or a firewall reload
of the host drops it), and :func:`apply_egress_rules` for every container right
after it starts.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from ...core.egress import READY_MARKER, host_rules_script, rules_script
from ...errors import LaunchFailed
from ..agents.base import Agent, FileEntry


async def wall_off_hosts(agents: Iterable[Agent], image: str, labels: Mapping[str, str]) -> None:
    """Make each agent's host refuse new connections from restricted sessions'
    bridges (see :func:`~jupyter_cluster.core.egress.host_rules_script`); raises
    LaunchFailed saying what went wrong (e.g. ``image`` lacks iptables)."""
    for agent in agents:
        code, output = await agent.run_on_host(
            image, host_rules_script(), ("NET_ADMIN", "NET_RAW"), labels
        )
        if code != 0:
            raise LaunchFailed(
                f"agent {agent.id}: could not put the egress chain on its host (exit code "
                f"{code}): {output.strip()[-300:]}; ContainerHardening.egress_image must have "
                "iptables, and the host a kernel with netfilter"
            )


async def apply_egress_rules(
    agent: Agent,
    container_id: str,
    host: str,
    denied: Sequence[str],
    image: str,
    labels: Mapping[str, str],
    agent_addresses: Sequence[str] = (),
) -> None:
    """Deny ``denied`` to a started container (``agent``: its gateway and each of
    ``agent_addresses``, the configured addresses of every agent), then let its
    start-up go on; raises LaunchFailed saying what went wrong (e.g. ``image`` lacks
    iproute2)."""
    script = rules_script(denied, [agent.config.address, *agent_addresses])
    caps = ("NET_ADMIN", "NET_RAW")  # NET_RAW: iptables
    code, output = await agent.run_beside(container_id, image, script, caps, labels)
    if code != 0:
        raise LaunchFailed(
            f"{host}: could not apply the egress rules (exit code {code}): "
            f"{output.strip()[-300:]}; ContainerHardening.egress_image must have iproute2 "
            "and iptables"
        )
    await agent.put_files(container_id, [FileEntry(READY_MARKER, b"", 0o644)])
