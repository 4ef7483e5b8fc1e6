"""The guard of session bridges on each agent host, put there by each engine process.

See :mod:`jupyter_cluster.core.host_guard` for what the guard refuses and why. The
:class:`~.pool.AgentPool` holds one :class:`HostGuards`; the launcher
(:func:`~jupyter_cluster.engine.launch.bring_up.bring_up`) and the warm pool
(:func:`~jupyter_cluster.engine.warm_make.make_set`) call :meth:`HostGuards.ensure`
for the agents they put containers on, concurrently with the rest of their work, and
await it before anyone gets the containers. Putting it runs a throwaway root
container with ``NET_ADMIN`` in the host's network namespace (a few tenths of a
second of the engine's work). This process remembers each agent host it put the
guard on (by its Docker URL: every kernel of a Jupyter server has an engine of its
own) for ``guard_refresh`` seconds (:attr:`HostGuards.refresh`), so that a host
whose firewall was reset meanwhile gets it again (a server also puts it again on the
hosts of running sessions, see :mod:`..guard_refresh`), and until the process finds
the agent out of reach (a restarted host or agent container starts with an empty
firewall: the Docker connection calls :func:`forget_host`); a failure is not
remembered, so the next launch tries again.

Docker removes the helper once it ends, even when its engine was killed meanwhile,
and the next helper run on the host removes one left created by an engine killed
before starting it (see :mod:`.docker.beside`).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable

from ...core import naming
from ...core.host_guard import guard_script
from ...errors import LaunchFailed
from .base import Agent

#: The helper's label: no manager or session label, so that the reconciler and a
#: failed launch's clean-up leave it alone while it runs (it removes itself).
HELPER_LABELS = {naming.LABEL_PREFIX + "helper": "host-guard"}
CAPABILITIES = ("NET_ADMIN", "NET_RAW")  # NET_RAW: iptables
#: Seconds after which a launch (and a server's upkeep) puts the guard on a host
#: again: ContainerHardening.guard_refresh's default.
REFRESH = 300.0
#: Agent hosts (Docker URLs) this process put the guard on: when (monotonic clock).
_PUT: dict[str, float] = {}


def _key(agent: Agent) -> str:
    return host_key(agent.config.url)


def host_key(url: str) -> str:
    """How this process names an agent host: its Docker URL ("local" for the socket)."""
    return url or "local"


def forget_host(url: str) -> None:
    """The agent at ``url`` was out of reach: put the guard there again at the next
    launch (called by the Docker connection when it cannot reach the agent)."""
    _PUT.pop(host_key(url), None)


class HostGuards:
    """The guard's putting, per agent host (see the module docstring)."""

    def __init__(self, refresh: float = REFRESH) -> None:
        self._running: dict[str, asyncio.Future[None]] = {}
        #: Seconds after which the guard is put on a host again (guard_refresh).
        self.refresh = refresh

    def guarded(self, agent: Agent) -> bool:
        """Whether this process put the guard on ``agent``'s host in the last
        :attr:`refresh` seconds."""
        put = _PUT.get(_key(agent))
        return put is not None and time.monotonic() - put < self.refresh

    def start(self, agents: Iterable[Agent], image: str | None) -> asyncio.Future[None]:
        """Begin :meth:`ensure` on ``agents`` (the launcher and the warm pool await it
        once their containers are made); ``image`` None: no guard (a finished future)."""
        if image is None:
            done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            done.set_result(None)
            return done
        return asyncio.ensure_future(self.ensure(list(agents), image))

    async def ensure(self, agents: Iterable[Agent], image: str) -> None:
        """Put the guard on each of ``agents``' hosts unless this process did lately,
        with a helper of ``image``; raises LaunchFailed saying what to do if one fails.

        Cancelling a caller does not cancel a helper other launches wait for."""
        waits = [
            asyncio.shield(self._ensure_one(agent, image))
            for agent in agents
            if not self.guarded(agent)
        ]
        if waits:
            await asyncio.gather(*waits)

    def _ensure_one(self, agent: Agent, image: str) -> asyncio.Future[None]:
        running = self._running.get(_key(agent))
        if running is None or running.done():
            running = asyncio.ensure_future(_put_guard(agent, image))
            self._running[_key(agent)] = running
        return running


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
    _PUT[_key(agent)] = time.monotonic()
