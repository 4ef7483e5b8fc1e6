"""The idle watcher: terminates sessions whose kernel here has been idle too long.

Started by :class:`~jupyter_cluster.server.service.ClusterService` when
``ClusterApp.idle_timeout`` is above 0 (off by default). Every
``idle_check_interval`` seconds it looks at each session with a kernel in this
server: the kernel's last activity and execution state (the server's kernel
manager tracks both), the terminals opened into the session's containers, and
the commands run in them by any of the user's processes (``exec``: the engine's
exec log, :mod:`~jupyter_cluster.engine.store.exec_log`, records each while it runs, and
when one last began or ended; one whose process has died no longer counts).
A session idle for the timeout is terminated with the reason saying so; until
then its REST model carries ``idle_deadline`` (the sidebar shows the time left).
It also tells the engine's utilization clean-up
(:mod:`jupyter_cluster.engine.utilization_idle`) of the kernels and terminals here.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from typing import Any

from traitlets import TraitError

from ..core.idle import Activity, idle_deadline, should_terminate
from ..core.models import Session
from ..core.state import USABLE
from ..engine.store.drivers import Driver, driver_alive
from ..engine.utilization_idle import UtilizationWatch
from ..errors import ClusterError
from . import audit


def _epoch(when: Any, default: float) -> float:
    return when.timestamp() if hasattr(when, "timestamp") else default


def last_activity(kernel: Any, default: float) -> float:
    """When ``kernel`` (jupyter_server's) last sent a message, in seconds since the
    epoch; ``default`` until the server has set it. A kernel being started is in the
    kernel manager before it is: reading the unset trait raises, and the session
    model of a REST launch is asked for meanwhile."""
    try:
        return _epoch(getattr(kernel, "last_activity", None), default)
    except TraitError:
        return default


class IdleWatcher:
    """Watch a service's sessions (see the module docstring)."""

    def __init__(self, service: Any, timeout: float, interval: float) -> None:
        """``service`` is the ClusterService (its manager, kernel and terminal managers,
        terminals and ``terminate``); not imported here, as the service imports this."""
        self.service, self.timeout, self.interval = service, timeout, interval
        self._task: asyncio.Task[None] | None = None
        # The engine's utilization clean-up (a local engine's) counts this server's
        # kernels and terminals as use too.
        watch = getattr(service.engine, "utilization", None)
        if isinstance(watch, UtilizationWatch):
            watch.sources.append(self.use)

    def activity(self, session: Session, kid: str | None) -> Activity | None:
        """The session's use now, its kernel being ``kid`` (``kernels.kernel_of``, which
        the caller has found), or None when that kernel is not in this server."""
        kernel = self.service.kernels.get(kid)
        if kernel is None:
            return None
        last_exec, running = self.execs(session)
        return Activity(
            last_activity=last_activity(kernel, session.updated_at),
            kernel_busy=getattr(kernel, "execution_state", "") == "busy",
            open_terminals=self.open_terminals(session),
            running_execs=sum(1 for driver in running if driver_alive(driver)),
            last_exec=last_exec,
        )

    def open_terminals(self, session: Session) -> int:
        """How many terminals into the session's containers are open in this server."""
        service = self.service
        terms = service.terminal_manager.terminals if service.terminal_manager else {}
        return sum(1 for name in service.terminals.names(session.id) if name in terms)

    def use(self, sessions: Sequence[Session]) -> dict[str, Activity]:
        """What this server knows of the sessions' use, for the engine's utilization
        clean-up: for each session whose kernel runs here or into which a terminal is
        open from here (whatever launched it), its kernel's state and last message and
        those terminals; the server's kernels are walked once. Execs the clean-up
        reads from the engine's exec log itself."""
        kernels = self.service.kernels
        found = kernels.by_session()
        known: dict[str, Activity] = {}
        for session in sessions:
            kernel = kernels.get(kernels.kernel_of(session, found))
            terminals = self.open_terminals(session)
            if kernel is None and not terminals:
                continue
            known[session.id] = Activity(
                last_activity=last_activity(kernel, 0.0),
                kernel_busy=getattr(kernel, "execution_state", "") == "busy",
                open_terminals=terminals,
            )
        return known

    def execs(self, session: Session) -> tuple[float | None, list[Driver]]:
        """When an exec into the session last began or ended, and the processes of
        those running: from the engine's exec log, which this user's processes share
        (the store's file, or the shared service's client's own log)."""
        return self.service.engine.exec_log.activity(session.id)

    def deadline(self, session: Session, kid: str | None) -> float | None:
        """When the session, whose kernel is ``kid``, will be terminated if it stays
        idle (None: never). The session model calls it."""
        activity = self.activity(session, kid)
        return None if activity is None else idle_deadline(activity, self.timeout)

    async def check(self, now: float | None = None) -> list[str]:
        """One pass: terminate every session idle past the timeout; their ids."""
        ended = []
        sessions = await self.service.engine.list()
        found = self.service.kernels.by_session()
        for session in sessions:
            if session.status not in USABLE:
                continue
            activity = self.activity(session, self.service.kernels.kernel_of(session, found))
            if activity is None:
                continue
            if should_terminate(activity, self.timeout, now or time.time()):
                reason = f"terminated after {self.timeout:g} s idle (ClusterApp.idle_timeout)"
                self.service.log.info("cluster session %s: %s", session.name, reason)
                try:
                    await self.service.terminate(session.id, reason=reason)
                    ended.append(session.id)
                    audit.ended_by_server(self.service, session, reason)
                except ClusterError as exc:
                    self.service.log.warning("idle session %s: %s", session.name, exc)
        return ended

    def start(self) -> None:
        """Check every ``interval`` seconds until :meth:`stop`."""
        self._task = asyncio.ensure_future(self._run())

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self.interval)
            try:
                await self.check()
            except Exception:
                self.service.log.exception("jupyter-cluster: the idle check failed")

    async def stop(self) -> None:
        """Stop checking."""
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
