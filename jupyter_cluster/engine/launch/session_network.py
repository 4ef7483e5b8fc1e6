"""The session's private network and its image on the placed agents: PREPARING's first step.

Called by :func:`~.bring_up.bring_up` before any container is made: the network is
created (a bridge, or a Swarm overlay through a manager agent, see :mod:`.overlay`)
while the agents that lack the image pull it (:mod:`.pulling`). On failure or
cancellation the pulls are stopped and Docker's answer to the network creation is
awaited, so that bring_up's clean-up (which removes everything the launch made, by
label) finds the network too.
"""

from __future__ import annotations

import asyncio
import time

from ...core import naming
from ...core.egress import AGENT
from ...core.host_guard import session_bridge
from ...core.models import Session
from ...errors import AgentError, ClusterError, LaunchFailed
from .context import LaunchContext
from .creating import made
from .egress import wall_off_hosts
from .overlay import network_maker
from .pulling import pull_missing


def _bridge_name(session: Session, ctx: LaunchContext, overlay: bool, walled: bool) -> str:
    """The Linux name of a single-node session's bridge: for the egress chain
    (restricted) or the guard of session bridges; "" (Docker's ``br-…``) otherwise."""
    if overlay:
        return ""
    if walled or ctx.guarded:
        return session_bridge(session.id, restricted=walled)
    return ""


async def network_and_image(session: Session, ctx: LaunchContext, placed: list[str]) -> None:
    """Create the session's network while the agents that lack its image pull it
    (a warm set has both). On failure the caller removes what was made (see the
    module's doc)."""
    began = time.monotonic()
    pulling = None
    if not ctx.warm:
        pulling = asyncio.ensure_future(
            pull_missing(
                ctx.agents,
                placed,
                session.spec.image,
                ctx.image_auth,
                ctx.pull_timeout,
                ctx.pull_report,
            )
        )
    try:
        # A warm set comes with its network; a host-network session needs none.
        if not ctx.warm and not ctx.network.host_network:
            network_agent = await network_maker(session, ctx.agents)
            overlay = len(placed) > 1
            # A restricted bridge is named for the agent hosts' firewall chain, which
            # must be there before the first container can send anything.
            walled = AGENT in ctx.limits.egress_deny and not overlay
            if walled:
                labels = naming.network_labels(session, ctx.manager_id)
                await wall_off_hosts([network_agent], ctx.limits.egress_image, labels)
            # Cancelled while Docker makes it: wait for its answer, so that the
            # clean-up after this finds the network (see creating.made).
            await made(
                network_agent.create_network(
                    naming.network_name(session),
                    naming.network_labels(session, ctx.manager_id),
                    overlay=overlay,
                    encrypted=ctx.encrypted_overlay,
                    mtu=ctx.network.mtu,
                    bridge_name=_bridge_name(session, ctx, overlay, walled),
                )
            )
        if ctx.clock is not None:
            ctx.clock.network_done(began)
        if pulling is not None:
            await pulling
            if ctx.clock is not None:
                ctx.clock.pull_done()
    except BaseException as exc:
        if pulling is not None:
            pulling.cancel()
            await asyncio.gather(pulling, return_exceptions=True)
        if isinstance(exc, LaunchFailed):
            raise
        if isinstance(exc, AgentError):
            raise LaunchFailed(f"could not create the session network: {exc}") from exc
        if isinstance(exc, ClusterError):
            raise LaunchFailed(str(exc)) from exc
        raise
