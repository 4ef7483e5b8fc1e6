"""The RDMA device nodes each container of a launch gets.

Called by :func:`~.bring_up.bring_up` for every container it creates: in a resource
group with ``rdma`` (``c.FastNetworking.resource_groups``, see
:mod:`jupyter_cluster.core.fast_network`) the agent is asked which device nodes it
has (:meth:`~jupyter_cluster.engine.agents.base.Agent.device_nodes`, cached by the
agent); other groups ask nothing and get none.
"""

from __future__ import annotations

from ...core import naming
from ...core.fast_network import GroupNetwork, rdma_devices
from ...core.models import Session
from ..agents.base import Agent


async def rdma_devices_on(
    agent: Agent, settings: GroupNetwork, session: Session, manager_id: str
) -> tuple[str, ...]:
    """The device nodes a container of ``session`` on ``agent`` gets: the agent's
    RDMA devices when the group asks for RDMA, else none (no probe). The probe's
    helper container carries the session's labels, so a crash leaves nothing
    that the usual clean-up does not find."""
    if not settings.rdma:
        return ()
    labels = {naming.LABEL_MANAGER: manager_id, naming.LABEL_SESSION: session.id}
    found = await agent.device_nodes(settings.rdma_devices, session.spec.image, labels)
    return rdma_devices(settings, found)
