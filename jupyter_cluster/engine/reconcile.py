"""Start-up reconciliation: make the store and Docker agree.

Docker is the truth about what runs. :meth:`ClusterManager.start` runs this once:
containers and networks labelled with this manager's id but with no live record
are removed (logged) or adopted, per ``ClusterManager.orphan_policy``; running
sessions whose containers died or whose agents are lost become RUNNING_DEGRADED; a
termination that waits for a lost agent is finished once it answers; sessions whose
containers are all gone, or whose launching process died, end in ERROR and are cleaned up.
A removal that a live process is doing is left to it, and a session that changed
after Docker was listed waits for the next pass (the listing may be stale).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from ..core import naming
from ..core.agent_loss import lost_reason
from ..core.models import Container, LaunchSpec, Session
from ..core.state import (
    LIVE,
    SETTLING,
    ContainerStatus,
    SessionStatus,
)
from ..errors import AgentError, ClusterError, Conflict
from .adoption import adopt_session
from .agents.base import Agent, ContainerState, not_running_reason
from .launch.teardown import tear_down
from .store.drivers import describe, driver_alive, still_ending
from .store.sessions import Store

log = logging.getLogger(__name__)


class Reconciler:
    """One reconciliation pass (see the module docstring).

    Made by :meth:`ClusterManager.refresh` with what it needs: the store, the
    agents by id, the orphan policy (``remove`` or ``adopt``) and the manager's
    ``terminate``, called to finish a termination an earlier process left half done.
    """

    def __init__(
        self,
        store: Store,
        agents: Mapping[str, Agent],
        *,
        orphan_policy: str,
        finish_termination: Callable[[str], Awaitable[object]],
        log: logging.Logger | logging.LoggerAdapter[Any] | None = None,
    ) -> None:
        self.log = log or logging.getLogger(__name__)
        self.store = store
        self.agents = agents
        self.orphan_policy = orphan_policy
        self.finish_termination = finish_termination
        self.started = 0.0  # when the current pass began scanning (set by run)
        self.down: dict[str, str] = {}  # unavailable agent id -> why (set by run)

    async def _scan(self, agent: Agent) -> tuple[list[ContainerState], list[str]] | str:
        """What ``agent`` runs of this manager, or why it could not be asked."""
        labels = {naming.LABEL_MANAGER: self.store.manager_id}
        try:
            containers = await agent.list_containers(labels)
            networks = await agent.list_networks(labels)
        except AgentError as exc:
            self.log.warning("reconciliation skipped agent %s: %s", agent.id, exc)
            return exc.message
        return containers, [
            n.labels.get(naming.LABEL_SESSION, "")
            for n in networks
            if naming.LABEL_WARM not in n.labels
        ]

    async def run(self) -> None:
        """Compare, then adopt, clean up or update; never raises for one bad session.

        Sessions changed after the scan began are left for the next pass: the scan
        may predate them (a launch that just finished is not "gone").
        """
        self.started = time.time()
        scans = await asyncio.gather(*(self._scan(a) for a in self.agents.values()))
        self.down = {a: s for a, s in zip(self.agents, scans, strict=True) if isinstance(s, str)}
        by_session: dict[str, list[tuple[str, ContainerState]]] = defaultdict(list)
        network_sessions: set[str] = set()
        # A container taken from the warm pool has no session label: its record says
        # whose it is. Warm containers nobody recorded are the pool's business.
        recorded = {
            c.container_id: s.id for s in self.store.list() for c in s.containers if c.container_id
        }
        for agent_id, scan in zip(self.agents, scans, strict=True):
            if isinstance(scan, str):
                continue
            for state in scan[0]:
                owner = recorded.get(state.id) or state.labels.get(naming.LABEL_SESSION, "")
                if owner or naming.LABEL_WARM not in state.labels:
                    by_session[owner].append((agent_id, state))
            network_sessions.update(scan[1])
        for session_id in set(by_session) | network_sessions:
            try:
                await self._docker_side(session_id, by_session.get(session_id, []))
            except Conflict as exc:  # it changed meanwhile, e.g. ended elsewhere
                self.log.debug("reconciliation of session %s: %s", session_id, exc)
            except ClusterError as exc:
                self.log.warning("reconciliation of session %s: %s", session_id, exc)
        for session in self.store.list():
            if session.id in by_session or session.updated_at >= self.started:
                continue
            try:
                if self._on_down_agents(session):
                    self._degrade_for_down_agents(session)
                else:
                    await self._store_side(session)
            except Conflict as exc:  # it changed meanwhile, e.g. ended elsewhere
                self.log.debug("reconciliation of session %s: %s", session.id, exc)
            except ClusterError as exc:
                self.log.warning("reconciliation of session %s: %s", session.id, exc)

    def _on_down_agents(self, session: Session) -> list[str]:
        """The unavailable agents ``session`` has containers on."""
        return sorted({c.agent for c in session.containers if c.agent in self.down})

    def _degrade_for_down_agents(self, session: Session) -> None:
        """A running session with containers on unavailable agents is degraded (with
        why); it is restored once they answer and its containers run."""
        if session.status is SessionStatus.RUNNING:
            why = lost_reason(session, self.down)  # names the lost containers
            self.store.set_status(session.id, SessionStatus.RUNNING_DEGRADED, why)
            self.log.warning("session %s degraded: %s", session.id, why)

    async def _docker_side(self, session_id: str, found: list[tuple[str, ContainerState]]) -> None:
        record = self.store.with_driver(session_id)
        session, driver = record or (None, None)
        live = session is not None and session.status in LIVE
        if session is not None and session.updated_at >= self.started:
            return  # changed since the scan began (ended, say): the scan may be stale
        if not live:
            # Only containers with no record at all are orphans to adopt: a session
            # that ended (perhaps while Docker was being scanned) keeps its history
            # and its leftovers are removed.
            adoptable = session is None and naming.is_uuid(session_id)
            if found and self.orphan_policy == "adopt" and adoptable:
                adopted = adopt_session(session_id, found)
                self.store.insert_session(adopted)
                self.log.info("adopted session %s (%d containers)", session_id, len(found))
                return
            ghost = session or Session(id=session_id, spec=LaunchSpec(image="?"))
            ghost = ghost.with_(
                containers=tuple(
                    Container(
                        host=s.labels.get(naming.LABEL_HOST, "?"),
                        role="",
                        idx=0,
                        local_rank=0,
                        kernel_id="",
                        agent=a,
                        container_id=s.id,
                    )
                    for a, s in found
                )
            )
            self.log.warning(
                "removing %d container(s) and the network of session %s: no live record of it",
                len(found),
                session_id,
            )
            await tear_down(ghost, self.agents, self.store.manager_id)
            return
        assert session is not None
        if session.status in SETTLING:
            if not driver_alive(driver):
                await self._fail(session, f"the process launching it ({describe(driver)}) exited")
            return
        if session.status is SessionStatus.TERMINATING:
            if not self._on_down_agents(session) and not still_ending(session.updated_at, driver):
                await self.finish_termination(session_id)  # else once they answer again
            return
        if session.updated_at < self.started:
            await self._update_running(session, found)

    async def _update_running(
        self, session: Session, found: list[tuple[str, ContainerState]]
    ) -> None:
        """Mark dead containers EXITED and the session degraded; restore a degraded
        session whose containers all run again (e.g. its agent came back)."""
        if self._on_down_agents(session):
            self._degrade_for_down_agents(session)
            return
        states = {s.labels.get(naming.LABEL_HOST): s for _, s in found}
        dead = []
        for container in session.containers:
            why = not_running_reason(states.get(container.host))
            if why is None:
                if container.status is not ContainerStatus.RUNNING:
                    self.store.update_container(
                        session.id, container.host, status=ContainerStatus.RUNNING, status_reason=""
                    )
                continue
            dead.append(f"{container.host} {why}")
            if container.status is not ContainerStatus.EXITED:
                self.store.update_container(
                    session.id, container.host, status=ContainerStatus.EXITED, status_reason=why
                )
        reason = "; ".join(dead)
        if dead and (session.status, session.status_reason) != (
            SessionStatus.RUNNING_DEGRADED,
            reason,
        ):  # also replaces an older reason, e.g. an outage of the agent that has ended
            self.store.set_status(session.id, SessionStatus.RUNNING_DEGRADED, reason)
        elif not dead and session.status is SessionStatus.RUNNING_DEGRADED:
            self.store.set_status(session.id, SessionStatus.RUNNING, "")
            self.log.info("session %s runs again: every container answers", session.id)

    async def _store_side(self, session: Session) -> None:
        # Its row again, with its driver: the list was read before the awaits of the
        # sessions before it. Unchanged since the scan began, it is still as listed.
        state = self.store.launch_state(session.id)
        if state is None or state.updated_at >= self.started or state.status != session.status:
            return  # forgotten, or changed since the scan began: the next pass's
        driver = state.driver
        if session.status is SessionStatus.ERROR:
            return
        if session.status is SessionStatus.PENDING:
            if not driver_alive(driver):
                self.store.set_status(
                    session.id,
                    SessionStatus.CANCELLED,
                    f"the process waiting for room ({describe(driver)}) exited",
                )
            return
        if session.status is SessionStatus.PREPARING and driver_alive(driver):
            return
        if session.status is SessionStatus.TERMINATING:
            if not still_ending(session.updated_at, driver):
                await self.finish_termination(session.id)
            return
        reason = (
            f"the process launching it ({describe(driver)}) exited"
            if session.status is SessionStatus.PREPARING
            else "its containers are gone (removed outside jupyter-cluster?)"
        )
        await self._fail(session, reason)

    async def _fail(self, session: Session, reason: str) -> None:
        await tear_down(session, self.agents, self.store.manager_id)
        with contextlib.suppress(ClusterError):
            self.store.delete_keys(session.id)
        self.store.set_status(session.id, SessionStatus.ERROR, reason)
        for container in session.containers:
            self.store.update_container(
                session.id, container.host, status=ContainerStatus.TERMINATED
            )
        self.log.warning("session %s ended in ERROR: %s", session.id, reason)
