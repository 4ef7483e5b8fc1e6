"""Host-network sessions: one container per agent, on the agent's own network.

A resource group with ``host_network`` in ``c.FastNetworking.resource_groups``
runs each container in its agent's network namespace (Docker's ``host`` network),
so training traffic goes straight to the host's NICs, with no bridge, NAT or
VXLAN in the way. The scheduler then places at most one container on an agent at
a time (:attr:`~jupyter_cluster.core.scheduler.AgentSlot.one_container`): the
containers would share the agent's ports (sshd on 2200, main1's kernel ports). No
session network is made; each container keeps its own hostname (main1, sub1…)
and finds the others through ``/etc/hosts`` lines naming their agents' addresses
(:func:`peer_hosts`), so ``ssh sub1``, the hostfile and ``BACKENDAI_CLUSTER_*``
work unchanged. Used by :mod:`jupyter_cluster.engine.launch.bring_up`. Pure.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping

from ..errors import LaunchFailed
from .models import Session

#: Docker's name of the network mode that shares the host's network namespace.
HOST_NETWORK = "host"


def _local(address: str) -> bool:
    """Whether ``address`` means "this machine" rather than one others can reach."""
    if address in ("", "localhost"):
        return True
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        return False  # a host name: the site's DNS decides
    return parsed.is_loopback or parsed.is_unspecified


def peer_hosts(session: Session, addresses: Mapping[str, str]) -> tuple[str, ...]:
    """The ``/etc/hosts`` entries ("host:address") every container of a placed
    host-network ``session`` gets: each host at its agent's address
    (``addresses``: agent id to ``AgentConfig.address``).

    A session on one agent reaches itself on loopback; across agents each agent
    needs an address the others reach, else :class:`LaunchFailed` says which.
    """
    agents = {c.agent or "" for c in session.containers}
    if len(agents) == 1:
        return tuple(f"{c.host}:127.0.0.1" for c in session.containers)
    unreachable = sorted(a for a in agents if _local(addresses.get(a, "")))
    if unreachable:
        raise LaunchFailed(
            f"a host-network session across agents needs each agent's address to be one "
            f"the other agents reach, but {', '.join(unreachable)} has "
            f"{addresses.get(unreachable[0], '')!r}; set `address` of those agents in "
            "ClusterManager.agents to their hosts' network addresses"
        )
    return tuple(f"{c.host}:{addresses[c.agent or '']}" for c in session.containers)
