"""The utilization idle clean-up: sessions that use no CPU or GPU are warned, then ended.

:class:`UtilizationWatch` is one of the engine's upkeep jobs
(:meth:`~jupyter_cluster.engine.manager.ClusterManager.upkeep`), so it runs in
whichever long-running process owns the engine: the Jupyter server in single-user
mode, the shared service in team mode; the CLI alone runs none. Every
``utilization_check_interval`` seconds it samples each running session's
containers, whatever front end launched it (:mod:`.utilization_reading`: Docker's
CPU counter averaged since the last sample, and ``nvidia-smi`` for GPUs). It asks
the exec log (in the store, so ``exec`` from any of the user's processes on this
machine counts) and every registered activity source (a server adds what it knows
of its kernels and terminals: :mod:`jupyter_cluster.server.idle`), and applies the pure rule
(:mod:`jupyter_cluster.core.utilization_idle`): warn through the status reason, end
with a reason, record the end in the audit log. Batch sessions are exempt while
their command runs.

The settings are ``c.ClusterManager.*``
(:class:`~.utilization_settings.UtilizationIdleSettings`, a base of the manager).
An owner's own timeout (a policy) comes from ``utilization_idle_timeout_for``, a
callable owner -> seconds (None: the site's).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence

from ..core.audit import session_event
from ..core.idle import Activity
from ..core.models import Session
from ..core.state import USABLE
from ..core.time_limits import WARNING_PREFIX
from ..core.utilization_idle import (
    IDLE_PREFIX,
    IdleRule,
    Reading,
    Verdict,
    Watch,
    batch_running,
    end_reason,
    judge,
    warning_reason,
)
from ..errors import ClusterError
from .agents.pool import AgentPool
from .store.audit_log import AuditLog
from .store.drivers import driver_alive
from .store.exec_log import ExecLog
from .store.jobs import set_reason
from .store.sessions import Store
from .utilization_reading import UsageReader
from .utilization_settings import UtilizationIdleSettings

log = logging.getLogger(__name__)
#: What a server tells of sessions' use, asked once per pass with every session sampled:
#: session id -> its use (a session left out: nothing known, e.g. its kernel is elsewhere).
ActivitySource = Callable[[Sequence[Session]], Mapping[str, Activity]]
#: Each session's use known to the sources in one pass; None: a source failed, so
#: nothing may be ended on that pass.
KnownUse = dict[str, list[Activity]] | None
Terminate = Callable[[str, str], Awaitable[Session]]
#: Sessions sampled at once (each sample takes Docker about a second).
PARALLEL = 8


class UtilizationWatch:
    """Samples sessions and applies the rule (see the module docstring).

    ``settings`` is the manager (its :class:`UtilizationIdleSettings`), read at every
    pass so a changed setting applies; ``terminate`` is the manager's.
    """

    def __init__(
        self,
        settings: UtilizationIdleSettings,
        store: Store,
        pool: AgentPool,
        exec_log: ExecLog,
        terminate: Terminate,
        logger: logging.Logger | None = None,
    ) -> None:
        self.settings, self.store, self.pool = settings, store, pool
        self.exec_log, self.terminate = exec_log, terminate
        self.log = logger or log
        self.reader = UsageReader(store, pool, self.log)
        #: What front ends in this process know of sessions' use (a server's kernels).
        self.sources: list[ActivitySource] = []
        #: Called after a warning, its removal or a termination (the server's events).
        self.on_change: Callable[[], None] | None = None
        self._watches: dict[str, Watch] = {}
        self._audit: AuditLog | None = None
        self._task: asyncio.Task[None] | None = None

    def rule_for(self, owner: str) -> IdleRule:
        """The rule for ``owner``'s sessions: its own timeout, else the site's."""
        s = self.settings
        timeout = s.utilization_idle_timeout
        if s.utilization_idle_timeout_for is not None:
            own = s.utilization_idle_timeout_for(owner)
            timeout = timeout if own is None else float(own)
        return IdleRule(
            timeout, s.utilization_idle_grace, s.idle_cpu_threshold, s.idle_gpu_threshold
        )

    @property
    def enabled(self) -> bool:
        """Whether any session may have a timeout (site-wide or per owner)."""
        s = self.settings
        return s.utilization_idle_timeout > 0 or s.utilization_idle_timeout_for is not None

    # -- one pass ---------------------------------------------------------------------

    async def check(self, now: float | None = None) -> list[str]:
        """Sample every running session and act on the rule; the ids of those ended."""
        sessions = [s for s in self.store.list() if s.status in USABLE]
        live = {s.id for s in sessions}
        self._watches = {k: w for k, w in self._watches.items() if k in live}
        self.reader.keep_only(
            c.container_id for s in sessions for c in s.containers if c.container_id
        )
        slots = asyncio.Semaphore(PARALLEL)
        rules = {s.id: self.rule_for(s.owner) for s in sessions}  # a policy's, looked up once

        async def sample(session: Session) -> Reading:
            async with slots:
                return await self.sample(session, rules[session.id])

        readings = await asyncio.gather(*(sample(s) for s in sessions))
        # Asked after the sampling, which takes Docker seconds: a kernel's use is as fresh
        # as the CPU readings it is weighed against.
        known = self.known_use(sessions)

        async def act(session: Session, reading: Reading) -> str | None:
            async with slots:  # ending a session is Docker's work too
                return await self.apply(session, rules[session.id], reading, known, now)

        ended = await asyncio.gather(*map(act, sessions, readings))
        return [e for e in ended if e is not None]

    async def sample(self, session: Session, rule: IdleRule) -> Reading:
        """The session's CPU and GPU reading for its ``rule``; none (it cannot be idle)
        when it has no timeout or is a batch session whose command runs."""
        if rule.timeout <= 0 or batch_running(session):
            return Reading(None)
        return await self.reader.read(session)

    async def apply(
        self,
        session: Session,
        rule: IdleRule,
        reading: Reading,
        known: KnownUse,
        now: float | None = None,
    ) -> str | None:
        """Weigh a session's ``reading`` and its use (``known``, of :meth:`known_use`)
        against its ``rule``, and warn, clear or end it; its id when it was ended."""
        exempt = batch_running(session)
        in_use, last_use = self.activity(session, known)
        now = time.time() if now is None else now
        old = self._watches.get(session.id, Watch())
        watch, verdict = judge(
            old, reading, rule, now, in_use=in_use, last_use=last_use, exempt=exempt
        )
        self._watches[session.id] = watch
        gpus = any(c.gpu_ids for c in session.containers)
        if verdict is Verdict.WARN and watch.warned_at is not None:
            self._warn(session, warning_reason(rule, watch.warned_at + rule.grace, gpus))
        elif verdict is Verdict.CLEAR:
            self._clear(session)
        elif verdict is Verdict.END and old.idle_since is not None:
            return await self._end(session, end_reason(rule, now - old.idle_since, gpus))
        return None

    def known_use(self, sessions: Sequence[Session]) -> KnownUse:
        """What the registered sources know of the sessions' use, each source asked
        once for all of them (a server walks its kernels once, not once per session).
        None when a source fails: its view is unknown, so every session is kept."""
        known: dict[str, list[Activity]] = {s.id: [] for s in sessions}
        for source in self.sources:
            try:
                found = source(sessions)
            except Exception as exc:  # a server's view must never stop the clean-up
                self.log.warning("idle clean-up: sessions' activity: %s", exc)
                return None
            for session_id, activity in found.items():
                if session_id in known:
                    known[session_id].append(activity)
        return known

    def activity(self, session: Session, known: KnownUse) -> tuple[bool, float | None]:
        """Whether something uses the session now, and when it was last used: the
        exec log's commands and what the sources know (``known``, of :meth:`known_use`;
        None keeps it)."""
        if known is None:
            return True, None  # not known: keep it
        last_exec, running = self.exec_log.activity(session.id)
        found = [Activity(0.0, running_execs=sum(map(driver_alive, running)), last_exec=last_exec)]
        found += known.get(session.id, [])
        last = max(a.last_use for a in found)
        return any(a.in_use for a in found), (last or None)

    # -- acting -----------------------------------------------------------------------

    def _warn(self, session: Session, reason: str) -> None:
        # Never over the lifetime's warning: that session ends by its limit anyway.
        if set_reason(
            self.store,
            session.id,
            reason,
            lambda s: s.status in USABLE and not s.status_reason.startswith(WARNING_PREFIX),
        ):
            self.log.warning("session %s %s", session.name, reason)
            self._changed()

    def _clear(self, session: Session) -> None:
        if set_reason(
            self.store,
            session.id,
            "",
            lambda s: s.status in USABLE and s.status_reason.startswith(IDLE_PREFIX),
        ):
            self.log.info("session %s is used again: no longer idle", session.name)
            self._changed()

    async def _end(self, session: Session, reason: str) -> str | None:
        self.log.warning("session %s %s", session.name, reason)
        try:
            await self.terminate(session.id, reason)
        except ClusterError as exc:  # another process may be ending it too
            self.log.warning("idle clean-up could not end %s: %s", session.name, exc)
            return None
        self._watches.pop(session.id, None)
        event = session_event("server", "server", "terminate", session, {"reason": reason})
        try:
            if self._audit is None:
                self._audit = AuditLog(self.store.tx)
            await asyncio.to_thread(self._audit.append, event)
        except Exception as exc:  # the session has ended: never fail because of the log
            self.log.error("could not write the audit log: %s", exc)
        self._changed()
        return session.id

    def _changed(self) -> None:
        if self.on_change is not None:
            self.on_change()

    # -- the background job ----------------------------------------------------------

    def start(self) -> None:
        """Sample every ``utilization_check_interval`` seconds until :meth:`stop`
        (idempotent; passes are skipped while no timeout is set)."""
        if self._task is None:
            self._task = asyncio.ensure_future(self._loop())

    async def stop(self) -> None:
        """Stop sampling (server stop)."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    async def _loop(self) -> None:
        while True:
            await asyncio.sleep(max(self.settings.utilization_check_interval, 0.1))
            if not self.enabled:
                continue
            try:
                await self.check()
            except Exception as exc:  # never let one bad pass end the clean-up
                self.log.warning("idle clean-up: %s", exc)
