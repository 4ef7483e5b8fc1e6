"""The warm pool: sets of containers prepared ahead, so a matching launch skips making
its network and containers.

Configured with ``c.ClusterManager.warm_pool`` (off when empty). The long-running
front end (the server, or the shared service) runs :meth:`WarmPool.keep`, which
refills the pool in the background and removes it when it stops; any process of the
same store takes a set through :meth:`WarmPool.take` while launching (called by
:class:`~.manager.ClusterManager`). The decisions are the pure core's
(:mod:`jupyter_cluster.core.warm`); the records are :class:`~.warm_table.WarmTable`'s.

A warm container runs a silent shell that waits on a root-only FIFO; nothing of a
session is in it. When a launch takes its set, the launcher copies the session's files
in (fresh keys and host keys, hostfile, environment) and tells it to run the usual
start-up script (:func:`~.launch.bring_up.bring_up`). Sets are never returned to the pool: a
session's containers and network are removed with it, like cold ones.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import Callable
from importlib.resources import files as package_files

from ..core import naming
from ..core.models import Session
from ..core.resources import Resources
from ..core.state import LIVE, SessionStatus
from ..core.warm import WarmShape, WarmTarget, refill_plan, shape_of, to_evict
from ..errors import AgentError
from .agents.base import Agent, ContainerSpec, FileEntry, Limits
from .agents.pool import AgentPool
from .launch.bring_up import published_ports_of
from .launch.warm_adoption import WARM_ENV_FILE, WARM_GO_FIFO
from .store.sessions import Store
from .warm_table import WarmTable

log = logging.getLogger(__name__)
PRESTART = f"{naming.RUNTIME_DIR}/prestart.py"
#: Lines runtime/prestart.py prints (in the container's log) once it is ready or not.
PRESTART_READY = "jupyter-cluster: kernel interpreter ready"
PRESTART_NOT_READY = "jupyter-cluster: no kernel interpreter ahead"
#: Seconds a warm main1 may take to import ipykernel ahead.
PRESTART_TIMEOUT = 120.0
#: A warm container's first process: wait for the signal, then be a normal container.
WAIT_SCRIPT = (
    f"mkdir -p -m 0700 {WARM_GO_FIFO.rsplit('/', 1)[0]} && mkfifo -m 0600 {WARM_GO_FIFO} && "
    f'read -r go <{WARM_GO_FIFO} && [ "$go" = go ] && set -a && . {WARM_ENV_FILE} && '
    f"set +a && exec /bin/sh {naming.RUNTIME_DIR}/start.sh"
)


# main1 first starts, as work, an interpreter that imports ipykernel ahead and waits
# for its kernel (runtime/prestart.py; the kernel's start-up hands it over). Without
# python3 or setpriv in the image, kernels start the usual way.
def prestart_script(uid: int) -> str:
    """The warm main1's prestart, as work with ``uid`` (ContainerHardening.work_uid)."""
    owner = f"{uid}:{uid}"
    return (
        f"if command -v python3 >/dev/null && command -v setpriv >/dev/null; then "
        f"mkdir -p -m 0700 {naming.PRESTART_DIR} && chown {owner} {naming.PRESTART_DIR} && "
        f"mkfifo -m 0600 {naming.PRESTART_DIR}/go && chown {owner} {naming.PRESTART_DIR}/go && "
        f"(setpriv --reuid={uid} --regid={uid} --clear-groups python3 {PRESTART} "
        f"</dev/null 2>&1 &); else echo '{PRESTART_NOT_READY}: no python3 or setpriv'; fi; "
    )


def _prestart_code() -> bytes:
    return (package_files("jupyter_cluster.runtime") / "prestart.py").read_bytes()


async def _prestarted(agent: Agent, container_id: str) -> None:
    """Wait until a warm main1's kernel interpreter is ready (or known not to be)."""

    async def follow() -> None:
        async for line in agent.logs(container_id, follow=True):
            if line.startswith(PRESTART_NOT_READY):
                log.warning("jupyter-cluster: warm main1 %s: %s", container_id[:12], line.strip())
                return
            if line.startswith(PRESTART_READY):
                return
        raise AgentError(f"warm container {container_id[:12]} exited", agent.id)

    await asyncio.wait_for(follow(), PRESTART_TIMEOUT)


class WarmPool:
    """Warm sets per agent and shape (see the module docstring)."""

    def __init__(
        self,
        store: Store,
        agents: AgentPool,
        targets: list[WarmTarget],
        limits: Callable[[], Limits],
        interval: float = 5.0,
    ) -> None:
        self.store = store
        self.agents = agents
        self.targets = targets
        self.limits = limits
        self.interval = interval
        self.table = WarmTable(store)
        self.wake = asyncio.Event()
        self._lock = asyncio.Lock()

    def _labels(self, **extra: str) -> dict[str, str]:
        return {naming.LABEL_MANAGER: self.store.manager_id, **extra}

    # -- taking ------------------------------------------------------------------------

    def take(self, session: Session) -> dict[str, str]:
        """A warm set for a placed session: its container ids by host (the session's
        from now on; its network is recorded as the session's), or {} (launch cold)."""
        shape = shape_of(session)
        if shape is None or not self.targets:
            return {}
        network, taken = self.table.take(session.id, session.containers[0].agent or "", shape.key)
        if taken:
            self.store.set_network(session.id, network)
            self.wake.set()
        return taken

    async def make_room(self, session: Session) -> None:
        """Remove warm sets that, with the sessions now placed, would take their agents
        past capacity (sets of other shapes than ``session``'s go first)."""
        ready = self.table.ready()
        if not ready:
            return
        shape = shape_of(session)
        usage = self.store.usage()
        for agent_id in {c.agent for c in session.containers if c.agent}:
            mine = [w for w in ready if w.agent == agent_id]
            if not mine:
                continue
            info = await self.agents.get(agent_id).info()
            held = usage.get(agent_id, Resources(0, 0, 0, 0))
            evict = to_evict(info.capacity, held, mine, shape.key if shape else "")
            await self._remove_sets([w.set_id for w in evict])

    # -- keeping -------------------------------------------------------------------------

    async def keep(self) -> None:
        """Refill until cancelled (the server's background task); then remove the pool."""
        try:
            await self.drain()  # a pool left by an earlier run may be of another config
            while True:
                try:
                    await self.sweep()
                    await self.fill()
                except Exception:  # an unreachable agent: try again next round
                    log.exception("jupyter-cluster: refilling the warm pool failed")
                self.wake.clear()
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(self.wake.wait(), self.interval)
        finally:
            await asyncio.shield(self.drain())

    async def fill(self) -> int:
        """One refill pass: make the sets :func:`refill_plan` says; how many were made."""
        async with self._lock:
            infos = await asyncio.gather(*(a.info() for a in self.agents.agents.values()))
            agents = {i.id: (i.resource_group, i.capacity) for i in infos if i.reachable}
            waiting = frozenset(
                s.spec.resource_group
                for s in self.store.list()
                if s.status is SessionStatus.PENDING
            )
            ready, used = self.table.ready(), self.store.usage()
            plan = refill_plan(self.targets, agents, used, ready, waiting)
            results = await asyncio.gather(
                *(self._make_set(self.agents.get(a), shape) for a, shape in plan),
                return_exceptions=True,
            )
        for result in results:
            if isinstance(result, BaseException):
                log.warning("jupyter-cluster: a warm set could not be made: %s", result)
        return sum(1 for r in results if not isinstance(r, BaseException))

    async def _make_set(self, agent: Agent, shape: WarmShape) -> None:
        if not await agent.has_image(shape.image):
            raise AgentError(f"agent {agent.id} has no image {shape.image}", agent.id)
        set_id = uuid.uuid4().hex
        network = f"jc-warm-{set_id[:12]}"
        await agent.create_network(
            network, self._labels(**{naming.LABEL_WARM: "network"}), overlay=False
        )
        made: dict[str, str] = {}
        try:
            results = await asyncio.gather(
                *(self._make_container(agent, shape, set_id, network, h) for h in shape.hosts),
                return_exceptions=True,
            )
            made = {h: r for h, r in zip(shape.hosts, results, strict=True) if isinstance(r, str)}
            failed = [r for r in results if isinstance(r, BaseException)]
            if failed:
                raise failed[0]
            self.table.add_set(set_id, agent.id, shape.key, network, made, shape.total)
        except BaseException:
            await asyncio.shield(self._remove(agent.id, network, list(made.values())))
            raise

    async def _make_container(
        self, agent: Agent, shape: WarmShape, set_id: str, network: str, host: str
    ) -> str:
        role = "main" if host == shape.hosts[0] else "sub"
        limits = self.limits()
        prestart = prestart_script(limits.work_uid) if role == "main" else ""
        spec = ContainerSpec(
            name=f"jc-{set_id[:12]}-{host}",
            image=shape.image,
            hostname=host,
            network=network,
            aliases=(host,),
            env={"HOME": naming.WORK_HOME, "LANG": "C.UTF-8"},
            labels=self._labels(
                **{naming.LABEL_WARM: shape.key, naming.LABEL_HOST: host, naming.LABEL_ROLE: role}
            ),
            resources=shape.resources,
            command=("/bin/sh", "-c", prestart + WAIT_SCRIPT),
            publish=published_ports_of(role, agent),
            limits=limits,
        )
        container_id = await agent.create_container(spec)
        try:
            if role == "main":
                await agent.put_files(container_id, [FileEntry(PRESTART, _prestart_code(), 0o644)])
            await agent.start_container(container_id)
            if role == "main":
                await _prestarted(agent, container_id)
        except BaseException:
            with contextlib.suppress(AgentError):
                await agent.remove_container(container_id)
            raise
        return container_id

    async def sweep(self) -> None:
        """Settle the records with Docker: forget taken containers once their session
        has them (or remove them if it ended first); remove warm containers and
        networks nobody recorded (left by a crash); forget records of containers gone."""
        async with self._lock:
            for container_id, agent_id, session_id in self.table.taken():
                session = self.store.get(session_id)
                owned = session is not None and any(
                    c.container_id == container_id for c in session.containers
                )
                if session is not None and session.status in LIVE and not owned:
                    continue  # still being launched
                if not owned:
                    with contextlib.suppress(Exception):
                        await self.agents.get(agent_id).remove_container(container_id)
                self.table.forget(container_id)
            known, networks = self.table.known()
            live = self.store.list()
            recorded = {c.container_id for s in live for c in s.containers if c.container_id}
            networks |= {naming.network_name(s) for s in live if s.status in LIVE}
            for agent in self.agents.agents.values():
                await self._sweep_agent(agent, known | recorded, networks)

    async def _sweep_agent(self, agent: Agent, containers: set[str], networks: set[str]) -> None:
        try:
            found = await agent.list_containers(self._labels())
            nets = await agent.list_networks(self._labels(**{naming.LABEL_WARM: "network"}))
        except AgentError:
            return
        ids = set()
        for state in found:
            ids.add(state.id)
            if naming.LABEL_WARM in state.labels and state.id not in containers:
                with contextlib.suppress(AgentError):
                    await agent.remove_container(state.id)
        for net in nets:
            if net.name not in networks:
                with contextlib.suppress(AgentError):  # still in use: next time
                    await agent.remove_network(net.id)
        for warm in self.table.ready():
            gone = not self.table.containers_of(warm.set_id) <= ids  # one of it is gone
            if warm.agent == agent.id and gone:
                await self._remove_sets([warm.set_id])

    async def drain(self) -> None:
        """Remove every warm set nobody has taken (and what a crash left)."""
        async with self._lock:
            await self._remove_sets([w.set_id for w in self.table.ready()])
        await self.sweep()

    async def _remove_sets(self, set_ids: list[str]) -> None:
        for agent_id, network, container_ids in self.table.withdraw(set_ids):
            await self._remove(agent_id, network, container_ids)

    async def _remove(self, agent_id: str, network: str, container_ids: list[str]) -> None:
        with contextlib.suppress(Exception):
            agent = self.agents.get(agent_id)
            await asyncio.gather(
                *(agent.remove_container(cid) for cid in container_ids), return_exceptions=True
            )
            await agent.remove_network(network)
