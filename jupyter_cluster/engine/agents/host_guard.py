"""The guard of session bridges on each agent host, put there once per engine process.

See :mod:`jupyter_cluster.core.host_guard` for what the guard refuses and why. The
:class:`~.pool.AgentPool` holds one :class:`HostGuards`; the launcher
(:func:`~jupyter_cluster.engine.launch.bring_up.bring_up`) and the warm pool
(:func:`~jupyter_cluster.engine.warm_make.make_set`) call :meth:`HostGuards.ensure`
for the agents they put containers on, concurrently with the rest of their work, and
await it before anyone gets the containers. The first call per agent runs a
throwaway root container with ``NET_ADMIN`` in the host's network namespace (about
0.3 s); later ones return at once. A failure is not remembered, so the next launch
tries again; a host whose firewall was reset meanwhile gets the chain again when
this process restarts (the rules are idempotent).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

from ...core import naming
from ...core.host_guard import guard_script
from ...errors import LaunchFailed
from .base import Agent

#: The helper's label: no manager or session label, so that the reconciler and a
#: failed launch's clean-up leave it alone while it runs (it removes itself).
HELPER_LABELS = {naming.LABEL_PREFIX + "helper": "host-guard"}
CAPABILITIES = ("NET_ADMIN", "NET_RAW")  # NET_RAW: iptables


class HostGuards:
    """Which agent hosts have the guard (see the module docstring)."""

    def __init__(self) -> None:
        self._done: dict[str, asyncio.Future[None]] = {}

    def guarded(self, agent_id: str) -> bool:
        """Whether this process has put the guard on ``agent_id``'s host."""
        done = self._done.get(agent_id)
        return done is not None and done.done() and not done.cancelled() and not done.exception()

    async def ensure(self, agents: Iterable[Agent], image: str) -> None:
        """Put the guard on each of ``agents``' hosts unless this process did already,
        with a helper of ``image``; raises LaunchFailed saying what to do if one fails.

        Cancelling a caller does not cancel a helper other launches wait for."""
        waits = [asyncio.shield(self._ensure_one(agent, image)) for agent in agents]
        await asyncio.gather(*waits)

    def _ensure_one(self, agent: Agent, image: str) -> asyncio.Future[None]:
        done = self._done.get(agent.id)
        if done is None or (done.done() and (done.cancelled() or done.exception())):
            done = asyncio.ensure_future(_put_guard(agent, image))
            self._done[agent.id] = done
        return done


#: What running without the guard means, said in every failure.
WITHOUT = (
    "c.ContainerHardening.guard_bridges = False goes without it, and then every local "
    "user of that host can connect to listeners in session containers"
)


async def _put_guard(agent: Agent, image: str) -> None:
    code, output = await agent.run_on_host(image, guard_script(), CAPABILITIES, HELPER_LABELS)
    if code == 125 and "Unable to find image" in output:
        raise LaunchFailed(
            f"agent {agent.id} lacks {image}, the image that puts the guard of session "
            f"bridges on its host: copy it there with `jupyter cluster image push-to-agents "
            f"{image} --agent {agent.id}` (or set c.ContainerHardening.egress_image to an "
            f"image with iptables that it has); {WITHOUT}"
        )
    if code != 0:
        raise LaunchFailed(
            f"agent {agent.id}: could not put the guard of session bridges on its host "
            f"(exit code {code}): {output.strip()[-300:]}; ContainerHardening.egress_image "
            f"must have iptables, and the host a kernel with netfilter; {WITHOUT}"
        )
