"""Fast networking per resource group: ``c.FastNetworking.resource_groups``.

The manager makes one :class:`FastNetworking` (its child, so the usual config files
apply) and hands :meth:`~FastNetworking.for_group` to the launcher, which gives the
session's group's :class:`~jupyter_cluster.core.fast_network.GroupNetwork` to
:func:`~.launch.bring_up.bring_up`: the session network gets its MTU, and each
container of a group with ``rdma`` gets the RDMA device nodes its agent has
(:mod:`.launch.rdma`), with ``IPC_LOCK`` and the memlock limit only then.
"""

from __future__ import annotations

from typing import Any

from traitlets import Dict, TraitError, validate
from traitlets.config import LoggingConfigurable

from ..core.fast_network import GroupNetwork, group_networks
from ..errors import InvalidRequest


class FastNetworking(LoggingConfigurable):
    """Network settings per resource group (configurable per site)."""

    resource_groups = Dict(
        config=True,
        help="""Fast networking per resource group, e.g. {'ib': {'mtu': 9000, 'rdma':
        True}}. mtu: Docker's MTU option of the session network, in bytes (0 or
        absent: Docker's default): on one agent (bridge) the containers' interfaces
        get it; across agents (overlay) it is the MTU of the links between them and
        the containers get it less the VXLAN header (50 bytes). rdma: pass
        the RDMA (InfiniBand, RoCE) device nodes of the agent through to the
        containers where it has any, with the IPC_LOCK capability and the memlock
        limit (NCCL, MPI); containers on agents without them get neither.
        rdma_devices: where the agents keep those nodes (default /dev/infiniband).
        memlock: that limit, 'unlimited' (the default) or a size such as 64g (an
        engine without CAP_SYS_RESOURCE, rootless or nested, cannot go past its own).
        host_network: run each container on its agent's own network (Docker's host
        network), one container per agent at a time; the agents' `address` must be
        one the other agents reach. Sessions of these groups never take warm
        containers.""",
    )

    @validate("resource_groups")
    def _check(self, proposal: Any) -> Any:
        try:
            group_networks(proposal["value"])
        except InvalidRequest as exc:
            raise TraitError(str(exc)) from None
        return proposal["value"]

    def for_group(self, group: str) -> GroupNetwork:
        """The settings of resource group ``group`` (Docker's defaults if none)."""
        return group_networks(self.resource_groups).get(group, GroupNetwork())
